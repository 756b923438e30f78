// `opencomputer logs`: the events of a project's sessions, one line each (time, session, agent,
// type, a short summary) or one JSON event per line, from a server or the embedded store,
// filtered by session, agent, type and time, and followed live with --follow.

import { OpenComputerError } from "@opencomputer/agent";
import type { SessionEvent } from "@opencomputer/protocol";
import { integer, json, noExtra, out, parse } from "../args.ts";
import { eventSummary } from "../format.ts";
import { EVENT_PAGE, type LogSession, type LogSource, openLogSource } from "../log-sources.ts";

export const LOGS_USAGE =
  "opencomputer logs [--session ID] [--agent ID] [--type T[,T]] [--since TIME] [--limit N] [--follow] [--json] [--local | --server] [--dir DIR]";

const POLL_MS = 500;
const DEFAULT_LIMIT = 200;

export interface LogFilter {
  types: string[];
  /** Milliseconds since the epoch; events before it are left out. */
  since?: number;
}

export interface LogsOptions {
  /** The project directory (default "."). */
  dir?: string;
  env?: NodeJS.ProcessEnv;
  /** The clock `--since 10m` counts back from. */
  now?: () => number;
  /** Stops --follow (SIGINT/SIGTERM also do). */
  signal?: AbortSignal;
  /** Where lines go (default stdout). */
  write?: (line: string) => void;
}

export async function logsCommand(argv: string[], options: LogsOptions = {}): Promise<number> {
  const { values, positionals } = parse(argv, {
    session: { type: "string" },
    agent: { type: "string" },
    type: { type: "string", multiple: true },
    since: { type: "string" },
    limit: { type: "string" },
    follow: { type: "boolean", short: "f" },
    json: { type: "boolean" },
    local: { type: "boolean" },
    server: { type: "boolean" },
    dir: { type: "string" },
  });
  noExtra(positionals, 0, LOGS_USAGE);
  const now = options.now ?? Date.now;
  const filter: LogFilter = {
    types: (values.type ?? []).flatMap((t) => t.split(",")).filter((t) => t !== ""),
    ...(values.since !== undefined ? { since: parseSince(values.since, now()) } : {}),
  };
  const limit = integer(values.limit, "limit", 1) ?? DEFAULT_LIMIT;
  const write = options.write ?? (values.json ? (line: string) => json(JSON.parse(line)) : out);
  const print = (e: SessionEvent, agentId: string) =>
    write(values.json ? JSON.stringify({ ...e, agentId }) : formatLogLine(e, agentId));
  const source = openLogSource(options.dir ?? values.dir ?? ".", values, options.env);
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  options.signal?.addEventListener("abort", onSignal, { once: true });
  if (values.follow) {
    process.once("SIGINT", onSignal);
    process.once("SIGTERM", onSignal);
  }
  try {
    const reader = new LogReader(source, filter, values.session, values.agent);
    const first = await reader.read(stop.signal);
    for (const { event, agentId } of first.slice(-limit)) print(event, agentId);
    while (values.follow && !stop.signal.aborted) {
      if (values.session && source.follow) {
        // One session on a server: its SSE stream, reconnecting from the cursor when it drops.
        await reader.stream(values.session, stop.signal, print).catch((error: unknown) => {
          if (!stop.signal.aborted && !(error instanceof Error)) throw error;
        });
      }
      await sleep(POLL_MS, stop.signal);
      if (stop.signal.aborted) break;
      for (const { event, agentId } of await reader.read(stop.signal)) print(event, agentId);
    }
    return 0;
  } catch (error) {
    if (stop.signal.aborted) return 0;
    throw error;
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    options.signal?.removeEventListener("abort", onSignal);
    await source.close();
  }
}

/** `2026-12-03T23:19:20.123Z  <session>  <agent>  <type>  <summary>`. */
export function formatLogLine(e: SessionEvent, agentId: string): string {
  return `${e.timestamp}  ${e.sessionId}  ${agentId}  ${e.type.padEnd(24)}${eventSummary(e)}`;
}

/** Whether an event passes the filter: `tool.failed` exact, `tool.` or `tool.*` a family. */
export function matches(e: SessionEvent, filter: LogFilter): boolean {
  if (filter.since !== undefined && Date.parse(e.timestamp) < filter.since) return false;
  if (filter.types.length === 0) return true;
  return filter.types.some((t) => {
    const family = t.endsWith(".*") ? t.slice(0, -1) : t.endsWith(".") ? t : undefined;
    return family ? e.type.startsWith(family) : e.type === t;
  });
}

/** An ISO 8601 time, or a duration back from now: `30s`, `10m`, `2h`, `7d`. */
export function parseSince(value: string, now: number): number {
  const relative = /^(\d+)(s|m|h|d)$/.exec(value);
  if (relative) {
    const unit = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[relative[2] as "s"];
    return now - Number(relative[1]) * unit;
  }
  const at = Date.parse(value);
  if (!/^\d{4}-\d{2}-\d{2}/.test(value) || Number.isNaN(at)) {
    throw new OpenComputerError(
      "usage",
      `--since must be an ISO 8601 time (2026-12-03T10:00:00Z) or a duration (30s, 10m, 2h, 7d); got "${value}"`,
      { path: "--since" },
    );
  }
  return at;
}

/**
 * Reads the sessions' events after a cursor per session; each call returns what is new since
 * the last, in time order. New sessions (of the newest LOG_SESSIONS) are picked up on each call.
 */
class LogReader {
  readonly #cursors = new Map<string, { agentId: string; after: number }>();

  constructor(
    private readonly source: LogSource,
    private readonly filter: LogFilter,
    private readonly sessionId: string | undefined,
    private readonly agentId: string | undefined,
  ) {}

  async read(signal: AbortSignal): Promise<Array<{ event: SessionEvent; agentId: string }>> {
    const sessions: LogSession[] = this.sessionId
      ? this.#cursors.size > 0
        ? [...this.#cursors].map(([id, c]) => ({ id, agentId: c.agentId }))
        : [await this.source.session(this.sessionId)]
      : await this.source.sessions(this.agentId);
    const found: Array<{ event: SessionEvent; agentId: string }> = [];
    for (const session of sessions) {
      const cursor = this.#cursors.get(session.id) ?? { agentId: session.agentId, after: 0 };
      this.#cursors.set(session.id, cursor);
      for (;;) {
        const page = await this.source.events(session.id, cursor.after, signal);
        for (const event of page) {
          if (event.seq <= cursor.after) continue;
          cursor.after = event.seq;
          if (matches(event, this.filter)) found.push({ event, agentId: session.agentId });
        }
        if (page.length < EVENT_PAGE) break;
      }
    }
    return byTime(found);
  }

  /** Streams one session already read once (its cursor is known) until the stream ends. */
  async stream(
    sessionId: string,
    signal: AbortSignal,
    print: (event: SessionEvent, agentId: string) => void,
  ): Promise<void> {
    const cursor = this.#cursors.get(sessionId);
    if (!cursor || !this.source.follow) return;
    await this.source.follow(
      sessionId,
      cursor.after,
      (events) => {
        for (const event of events) {
          if (event.seq <= cursor.after) continue;
          cursor.after = event.seq;
          if (matches(event, this.filter)) print(event, cursor.agentId);
        }
      },
      signal,
    );
  }
}

function byTime(found: Array<{ event: SessionEvent; agentId: string }>) {
  return found.sort(
    (a, b) =>
      a.event.timestamp.localeCompare(b.event.timestamp) ||
      a.event.sessionId.localeCompare(b.event.sessionId) ||
      a.event.seq - b.event.seq,
  );
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}
