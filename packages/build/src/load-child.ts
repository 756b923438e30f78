// Runs in the child process the build starts (`node --import tsx load-child.ts`): imports the
// tool modules one by one and reports the tools each exports. Never imported by the build
// itself.

import { createRequire } from "node:module";
import { dirname, isAbsolute, relative } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { collectMcpServers, isTool } from "@opencomputer/agent/internal";
import { awaitKill } from "./child-end.ts";
import type {
  LoadedMcpServer,
  LoadedTool,
  LoadFailure,
  LoadMessage,
  LoadRequest,
} from "./load-protocol.ts";

function send(message: LoadMessage): Promise<void> {
  return new Promise((resolve) => process.send?.(message, () => resolve()));
}

async function load({ root, modules }: LoadRequest): Promise<void> {
  // ES modules that fail rethrow the same error object to every importer; the first module
  // to report it (dependencies are imported first) is where it came from.
  const reported = new WeakSet<object>();
  // defineMcpServer() reports each definition made while the modules load (they need not be
  // exported: `const docs = defineMcpServer(...)` in agent.ts is enough).
  const servers = collectMcpServers();
  for (const module of modules) {
    await send({ type: "start", module });
    try {
      const ns = (await import(pathToFileURL(module).href)) as Record<string, unknown>;
      const mcpServers: LoadedMcpServer[] = servers.take().map((found) => {
        const location = projectFrame(found.stack, root);
        return {
          declaration: found.declaration,
          ...(found.connection ? { connection: found.connection } : {}),
          ...(location ? { location } : {}),
        };
      });
      await send({ type: "loaded", module, tools: toolsOf(ns), mcpServers });
    } catch (error) {
      servers.take();
      const known = typeof error === "object" && error !== null && reported.has(error);
      if (typeof error === "object" && error !== null) reported.add(error);
      await send(
        known
          ? { type: "failed", module }
          : { type: "failed", module, error: describe(error, root) },
      );
    }
  }
  await send({ type: "done" });
  awaitKill();
}

function toolsOf(ns: Record<string, unknown>): LoadedTool[] {
  const byTool = new Map<object, LoadedTool>();
  for (const [exportName, value] of Object.entries(ns)) {
    if (!isTool(value)) continue;
    const seen = byTool.get(value);
    if (seen) {
      seen.exports.push(exportName);
      continue;
    }
    const tool: LoadedTool = {
      exports: [exportName],
      name: value.name,
      description: value.description,
      result: value.result,
      kind: value.kind,
    };
    if (value.input !== undefined) tool.input = value.input as LoadedTool["input"];
    if (value.output !== undefined) tool.output = value.output as LoadedTool["output"];
    byTool.set(value, tool);
  }
  return [...byTool.values()];
}

function describe(error: unknown, root: string): LoadFailure {
  if (!(error instanceof Error)) return { name: "Error", message: String(error) };
  const failure: LoadFailure = { name: error.name, message: error.message };
  const code = (error as { code?: unknown }).code;
  if (error.name === "ToolDefinitionError" && typeof code === "string") failure.code = code;
  const location = projectFrame(error.stack ?? "", root);
  if (location) failure.location = location;
  return failure;
}

// Frames in the SDK (defineTool throwing) or in this loader are never the user's line, even
// when they lie inside the project (a monorepo built from its root).
const NOT_USER_CODE = [
  dirname(fileURLToPath(import.meta.url)),
  dirname(createRequire(import.meta.url).resolve("@opencomputer/agent")),
];

/** The first `file:line:column` of a stack that is the user's code: in the project, not a package. */
function projectFrame(stack: string, root: string): LoadFailure["location"] {
  for (const match of stack.matchAll(/((?:file:\/\/)?\/[^\s():]+):(\d+):(\d+)/g)) {
    const [, where, line, column] = match;
    const file = where!.startsWith("file:") ? fileURLToPath(where!) : where!;
    const rel = relative(root, file);
    if (rel.startsWith("..") || isAbsolute(rel) || rel.includes("node_modules")) continue;
    if (NOT_USER_CODE.some((dir) => !relative(dir, file).startsWith(".."))) continue;
    return { file, line: Number(line), column: Number(column) };
  }
  return undefined;
}

process.once("message", (request: LoadRequest) => {
  void load(request);
});
void send({ type: "ready" });
process.on("uncaughtException", (error) => {
  // Something a module started at load failed later; report it as the pending module's failure.
  void send({ type: "failed", module: "", error: describe(error, process.cwd()) }).then(() =>
    process.exit(1),
  );
});
