import { OpenComputerError } from "@opencomputer/agent";
import { integer, json, need, noExtra, out, parse, short } from "../../args.ts";
import { type ApiClient, seg } from "../../client.ts";
import { attachRemote } from "./attach.ts";

export const SESSION_USAGE = `opencomputer session create --agent <id@alias> [--label k=v ...] [--json] ["first message"]
  opencomputer session attach <id> [--from-now] [--follow] [--interactive] [--json] [--verbose]
  opencomputer session list [--agent ID] [--status S] [--limit N] [--json]
  opencomputer session inspect <id> [--json]
  opencomputer session send <id> "text" [--mode queue|steer|interrupt]
  opencomputer session end <id>`;

interface Turn {
  id: string;
  status: string;
  mode?: string;
  input?: { text?: string };
  outcome?: unknown;
  error?: { code?: string; message?: string } | null;
}
interface Session {
  id: string;
  agentId?: string;
  status: string;
  createdAt?: string;
  labels?: Record<string, string>;
  turns?: Turn[];
  result?: { turnId: string; data: unknown } | null;
  question?: unknown;
  activity?: { activeTurnId?: string | null; queued?: number };
}

export const SUBCOMMANDS = new Set(["create", "list", "inspect", "send", "end", "attach"]);

/** True when `session <sub>` is one of the remote subcommands (else it is the one-shot form). */
export function isRemoteSession(sub: string | undefined): boolean {
  return sub !== undefined && SUBCOMMANDS.has(sub);
}

export async function sessionRemote(client: () => ApiClient, argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  switch (sub) {
    case "create":
      return create(client, rest);
    case "list":
      return list(client, rest);
    case "inspect":
      return inspect(client, rest);
    case "send":
      return send(client, rest);
    case "end":
      return end(client, rest);
    case "attach":
      return attachRemote(client, rest);
    default:
      throw new OpenComputerError(
        "usage",
        `Unknown subcommand "session ${sub ?? ""}". Usage:\n  ${SESSION_USAGE}`,
      );
  }
}

async function create(client: () => ApiClient, argv: string[]): Promise<number> {
  const usage =
    'opencomputer session create --agent <id@alias> [--label k=v ...] [--json] ["first message"]';
  const { values, positionals } = parse(
    argv,
    {
      agent: { type: "string" },
      label: { type: "string", multiple: true },
      json: { type: "boolean" },
    },
    usage,
  );
  if (!values.agent) throw new OpenComputerError("usage", `Missing --agent. Usage: ${usage}`);
  const text = positionals.join(" ").trim();
  const labels: Record<string, string> = {};
  for (const pair of values.label ?? []) {
    const eq = pair.indexOf("=");
    if (eq <= 0) throw new OpenComputerError("usage", `--label must be k=v, got "${pair}"`);
    labels[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  const body = {
    agentId: values.agent,
    ...(Object.keys(labels).length > 0 ? { labels } : {}),
  };
  const api = client();
  const created = await api.post<{ session: Session; deployment: unknown }>("/sessions", body);
  const id = created.session.id;
  // The first message, as a turn of the new session (follow it with `session attach`).
  const sent = text
    ? await api.post<{ turnId: string }>(`/sessions/${seg(id)}/turns`, { input: { text } })
    : undefined;
  if (values.json) json({ ...created, ...(sent ? { turnId: sent.turnId } : {}) });
  else {
    out(id);
    if (sent)
      process.stderr.write(
        `sent turn ${sent.turnId}; follow it: opencomputer session attach ${id}\n`,
      );
  }
  return 0;
}

async function list(client: () => ApiClient, argv: string[]): Promise<number> {
  const usage = "opencomputer session list [--agent ID] [--status S] [--limit N] [--json]";
  const { values, positionals } = parse(argv, {
    agent: { type: "string" },
    status: { type: "string" },
    limit: { type: "string" },
    json: { type: "boolean" },
  });
  noExtra(positionals, 0, usage);
  const limit = integer(values.limit, "limit", 1);
  const query = new URLSearchParams();
  if (values.agent) query.set("agent", values.agent);
  if (values.status) query.set("status", values.status);
  if (limit !== undefined) query.set("limit", String(limit));
  const qs = query.size > 0 ? `?${query}` : "";
  const page = await client().get<{ sessions: Session[]; nextCursor: string | null }>(
    `/sessions${qs}`,
  );
  if (values.json) {
    json(page);
    return 0;
  }
  if (page.sessions.length === 0) out("no sessions");
  for (const s of page.sessions) {
    const active = s.activity?.activeTurnId ? ` running ${s.activity.activeTurnId}` : "";
    const queued = s.activity?.queued ? ` queued ${s.activity.queued}` : "";
    out(
      `${s.id}  ${s.status.padEnd(15)} ${s.agentId ?? ""}  ${s.createdAt ?? ""}${active}${queued}`,
    );
  }
  if (page.nextCursor) out(`(more: newest ${page.sessions.length} shown; raise --limit)`);
  return 0;
}

async function inspect(client: () => ApiClient, argv: string[]): Promise<number> {
  const usage = "opencomputer session inspect <id> [--json]";
  const { values, positionals } = parse(argv, { json: { type: "boolean" } });
  const id = need(positionals, 0, "the session id", usage);
  noExtra(positionals, 1, usage);
  const s = await client().get<Session>(`/sessions/${seg(id)}`);
  if (values.json) {
    json(s);
    return 0;
  }
  out(`session ${s.id}`);
  out(`  agent    ${s.agentId ?? "?"}`);
  out(`  status   ${s.status}`);
  if (s.labels && Object.keys(s.labels).length > 0)
    out(
      `  labels   ${Object.entries(s.labels)
        .map(([k, v]) => `${k}=${v}`)
        .join(" ")}`,
    );
  const turns = s.turns ?? [];
  out(`  turns    ${turns.length}`);
  for (const t of turns) {
    const error = t.error ? ` (${t.error.code}: ${t.error.message})` : "";
    const text = t.input?.text !== undefined ? `  ${short(t.input.text, 60)}` : "";
    out(`    ${t.id}  ${t.status}${error}${text}`);
  }
  out(`  result   ${s.result ? `${short(s.result.data)} (turn ${s.result.turnId})` : "none"}`);
  out(`  question ${s.question ? short(s.question) : "none"}`);
  return 0;
}

async function send(client: () => ApiClient, argv: string[]): Promise<number> {
  const usage = 'opencomputer session send <id> "text" [--mode queue|steer|interrupt]';
  const { values, positionals } = parse(argv, {
    mode: { type: "string" },
    json: { type: "boolean" },
  });
  const id = need(positionals, 0, "the session id", usage);
  const text = positionals.slice(1).join(" ").trim();
  if (!text) throw new OpenComputerError("usage", `Missing the text. Usage: ${usage}`);
  const mode = values.mode;
  if (mode !== undefined && !["queue", "steer", "interrupt"].includes(mode))
    throw new OpenComputerError("usage", `--mode must be queue, steer or interrupt, got "${mode}"`);
  const sent = await client().post<{ turnId: string; status: string; duplicate: boolean }>(
    `/sessions/${seg(id)}/turns`,
    { input: { text }, ...(mode ? { mode } : {}) },
  );
  if (values.json) json(sent);
  else out(sent.turnId);
  return 0;
}

async function end(client: () => ApiClient, argv: string[]): Promise<number> {
  const usage = "opencomputer session end <id> [--json]";
  const { values, positionals } = parse(argv, { json: { type: "boolean" } });
  const id = need(positionals, 0, "the session id", usage);
  noExtra(positionals, 1, usage);
  const ended = await client().post<{ session: Session }>(`/sessions/${seg(id)}/end`);
  if (values.json) json(ended);
  else out(`session ${ended.session.id} ${ended.session.status}`);
  return 0;
}
