// `opencomputer memory ...`: the owner's memory documents on a running server, through
// /projects/<p>/memory/... (docs/memory.md). Writes are conditional: each command reads the
// document first and sends its ETag, so an edit made meanwhile by an agent or another owner is
// refused (precondition_failed) rather than overwritten.

import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { OpenComputerError } from "@opencomputer/agent";
import type {
  MemoryDocument,
  MemoryDocumentMeta,
  MemoryResourceView,
} from "@opencomputer/protocol";
import { json, need, noExtra, out, parse } from "../../args.ts";
import { type ApiClient, seg } from "../../client.ts";

export const MEMORY_USAGE = `opencomputer memory list <resource> | show <resource> <id>
          | create <resource> <id> --title T [--text-file P | --text-stdin] [--summary S] [--frozen]
          | edit <resource> <id> [--text-file P | --text-stdin] [--summary S]
          | freeze <resource> <id> | unfreeze <resource> <id> | remove <resource> <id>
          | export --out DIR [--resource R ...]
          [--environment development|production] [--project P] [--json]
  The project is --project, else OPENCOMPUTER_PROJECT, else "default".`;

const COMMON = {
  environment: { type: "string" },
  project: { type: "string" },
  json: { type: "boolean" },
} as const;

interface Where {
  base: string;
  query: string;
}

function where(values: { environment?: string | undefined; project?: string | undefined }): Where {
  const environment = values.environment ?? "development";
  if (environment !== "development" && environment !== "production") {
    throw new OpenComputerError("usage", "--environment must be development or production");
  }
  const project = values.project ?? process.env.OPENCOMPUTER_PROJECT ?? "default";
  return { base: `/projects/${seg(project)}/memory`, query: `?environment=${environment}` };
}

const docPath = (w: Where, resource: string, id: string) =>
  `${w.base}/${seg(resource)}/documents/${seg(id)}${w.query}`;

function readText(values: {
  "text-file"?: string | undefined;
  "text-stdin"?: boolean | undefined;
}) {
  if (values["text-file"] !== undefined && values["text-stdin"]) {
    throw new OpenComputerError("usage", "give --text-file or --text-stdin, not both");
  }
  if (values["text-file"] !== undefined) return readFileSync(values["text-file"], "utf8");
  if (values["text-stdin"]) return readFileSync(0, "utf8");
  return undefined;
}

/** The text after the person edited it in $VISUAL / $EDITOR. */
function editInEditor(text: string): string {
  const editor = process.env.VISUAL || process.env.EDITOR;
  if (!editor) {
    throw new OpenComputerError("usage", "set EDITOR (or give --text-file / --text-stdin)");
  }
  const dir = mkdtempSync(join(tmpdir(), "oc-memory-"));
  try {
    const file = join(dir, "document.txt");
    writeFileSync(file, text, { mode: 0o600 });
    const result = spawnSync(`${editor} "$0"`, [file], { shell: true, stdio: "inherit" });
    if (result.status !== 0) {
      throw new OpenComputerError(
        "editor_failed",
        `${editor} exited with ${result.status}; nothing saved`,
      );
    }
    return readFileSync(file, "utf8");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function getDoc(api: ApiClient, path: string) {
  const { body, etag } = await api.conditional<MemoryDocument>("GET", path, {});
  return { doc: body!, etag: etag ?? `"${body!.revision}"` };
}

function show(doc: MemoryDocument | MemoryDocumentMeta, asJson: boolean | undefined) {
  if (asJson) return json(doc);
  out(
    `${doc.id}  "${doc.title}"  revision ${doc.revision}  ${doc.bytes}/${doc.maxBytes} bytes  agent writes ${doc.agentWrites}  updated ${doc.updatedAt} by ${doc.writer.kind === "agent" ? `session ${doc.writer.sessionId}` : "owner"}`,
  );
  if (doc.summary) out(`summary: ${doc.summary}`);
  if ("text" in doc) out(doc.text);
}

async function listAll(api: ApiClient, w: Where, resource: string): Promise<MemoryDocumentMeta[]> {
  const documents: MemoryDocumentMeta[] = [];
  let cursor: string | null = null;
  do {
    const more: string = cursor ? `&cursor=${encodeURIComponent(cursor)}` : "";
    const page: { documents: MemoryDocumentMeta[]; nextCursor: string | null } = await api.get(
      `${w.base}/${seg(resource)}/documents${w.query}${more}`,
    );
    documents.push(...page.documents);
    cursor = page.nextCursor;
  } while (cursor);
  return documents;
}

export async function memoryRemote(client: () => ApiClient, argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  const usage = `opencomputer memory ${sub ?? "<command>"} ...\n${MEMORY_USAGE}`;
  switch (sub) {
    case "list": {
      const { values, positionals } = parse(rest, COMMON, usage);
      const resource = need(positionals, 0, "the resource id", usage);
      noExtra(positionals, 1, usage);
      const documents = await listAll(client(), where(values), resource);
      if (values.json) json({ documents });
      else if (documents.length === 0) out("no documents");
      else for (const doc of documents) show(doc, false);
      return 0;
    }
    case "show": {
      const { values, positionals } = parse(rest, COMMON, usage);
      const resource = need(positionals, 0, "the resource id", usage);
      const id = need(positionals, 1, "the document id", usage);
      noExtra(positionals, 2, usage);
      show((await getDoc(client(), docPath(where(values), resource, id))).doc, values.json);
      return 0;
    }
    case "create":
    case "edit": {
      const { values, positionals } = parse(
        rest,
        {
          ...COMMON,
          title: { type: "string" },
          summary: { type: "string" },
          "text-file": { type: "string" },
          "text-stdin": { type: "boolean" },
          frozen: { type: "boolean" },
        },
        usage,
      );
      const resource = need(positionals, 0, "the resource id", usage);
      const id = need(positionals, 1, "the document id", usage);
      noExtra(positionals, 2, usage);
      const path = docPath(where(values), resource, id);
      const text = readText(values);
      const api = client();
      if (sub === "create") {
        if (values.title === undefined)
          throw new OpenComputerError("usage", `--title is required\n${usage}`);
        const { body } = await api.conditional<MemoryDocument>(
          "PUT",
          path,
          { "if-none-match": "*" },
          {
            title: values.title,
            ...(text !== undefined ? { text } : {}),
            ...(values.summary !== undefined ? { summary: values.summary } : {}),
            ...(values.frozen ? { agentWrites: "disabled" } : {}),
          },
        );
        show(body!, values.json);
        return 0;
      }
      if (values.title !== undefined || values.frozen) {
        throw new OpenComputerError(
          "usage",
          "edit changes text and summary; use freeze/unfreeze for agent writes",
        );
      }
      const { doc, etag } = await getDoc(api, path);
      const next = text ?? editInEditor(doc.text);
      const { body } = await api.conditional<MemoryDocument>(
        "PUT",
        path,
        { "if-match": etag },
        {
          text: next,
          ...(values.summary !== undefined ? { summary: values.summary } : {}),
        },
      );
      show(body!, values.json);
      return 0;
    }
    case "freeze":
    case "unfreeze":
    case "remove": {
      const { values, positionals } = parse(rest, COMMON, usage);
      const resource = need(positionals, 0, "the resource id", usage);
      const id = need(positionals, 1, "the document id", usage);
      noExtra(positionals, 2, usage);
      const path = docPath(where(values), resource, id);
      const api = client();
      const { etag } = await getDoc(api, path);
      if (sub === "remove") {
        await api.conditional("DELETE", path, { "if-match": etag });
        if (values.json) json({ removed: { resource, id } });
        else out(`removed ${resource}/${id} (its id stays reserved)`);
        return 0;
      }
      const agentWrites = sub === "freeze" ? "disabled" : "enabled";
      const { body } = await api.conditional<MemoryDocument>(
        "PATCH",
        path,
        { "if-match": etag },
        { agentWrites },
      );
      show(body!, values.json);
      return 0;
    }
    case "export": {
      const { values, positionals } = parse(
        rest,
        { ...COMMON, out: { type: "string" }, resource: { type: "string", multiple: true } },
        usage,
      );
      noExtra(positionals, 0, usage);
      if (!values.out) throw new OpenComputerError("usage", `--out DIR is required\n${usage}`);
      const w = where(values);
      const api = client();
      const inventory = await api.get<{ resources: MemoryResourceView[] }>(`${w.base}${w.query}`);
      const wanted = values.resource ?? inventory.resources.map((r) => r.id);
      const written: string[] = [];
      for (const resource of wanted) {
        for (const meta of await listAll(api, w, resource)) {
          const { doc } = await getDoc(api, docPath(w, resource, meta.id));
          const dir = join(values.out, resource);
          mkdirSync(dir, { recursive: true });
          const file = join(dir, `${doc.id}.json`);
          writeFileSync(file, `${JSON.stringify(doc, null, 2)}\n`);
          written.push(file);
        }
      }
      if (values.json) json({ files: written });
      else out(`exported ${written.length} document(s) to ${values.out}`);
      return 0;
    }
    default:
      throw new OpenComputerError(
        "usage",
        `Unknown subcommand "memory ${sub ?? ""}". Usage:\n  ${MEMORY_USAGE}`,
      );
  }
}
