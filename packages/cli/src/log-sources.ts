// Where `opencomputer logs` reads events from: a server (the management API's session list and
// event pages) or the project's embedded store (`.opencomputer/data.db`, read directly, so it
// works while `opencomputer dev` or a one-shot session writes to it, and when nothing runs).

import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { OpenComputerError } from "@opencomputer/agent";
import { readEventStream } from "@opencomputer/event-stream";
import type { SessionEvent } from "@opencomputer/protocol";
import { createSqliteStore } from "@opencomputer/store-sqlite";
import { ApiClient, seg } from "./client.ts";

/** The sessions `logs` reads at most (the newest first). */
export const LOG_SESSIONS = 100;
/** The page size of event reads (the server's, docs/api.md). */
export const EVENT_PAGE = 500;

export interface LogSession {
  id: string;
  agentId: string;
}

export interface LogSource {
  /** Where the events come from, for the first line a person sees. */
  readonly label: string;
  /** The newest sessions, at most LOG_SESSIONS, of one agent when given. */
  sessions(agentId?: string): Promise<LogSession[]>;
  /** One session, or a not_found error. */
  session(id: string): Promise<LogSession>;
  /** Events after `after`, a page at a time (EVENT_PAGE). */
  events(sessionId: string, after: number, signal?: AbortSignal): Promise<SessionEvent[]>;
  /**
   * Streams one session's events after `after` as they are committed, until the stream ends or
   * `signal` aborts (a server's SSE route). Absent: the caller polls `events`.
   */
  follow?(
    sessionId: string,
    after: number,
    onEvents: (events: SessionEvent[]) => void,
    signal: AbortSignal,
  ): Promise<void>;
  close(): Promise<void>;
}

export function serverSource(api: ApiClient): LogSource {
  return {
    label: api.url,
    async sessions(agentId) {
      const query = new URLSearchParams({ limit: String(LOG_SESSIONS) });
      if (agentId) query.set("agent", agentId);
      const page = await api.get<{ sessions: LogSession[] }>(`/sessions?${query}`);
      return page.sessions.map((s) => ({ id: s.id, agentId: s.agentId }));
    },
    async session(id) {
      const s = await api.get<LogSession>(`/sessions/${seg(id)}`);
      return { id: s.id, agentId: s.agentId };
    },
    async events(sessionId, after, signal) {
      const page = await api.get<{ events: SessionEvent[] }>(
        `/sessions/${seg(sessionId)}/events?after=${after}`,
        signal,
      );
      return page.events;
    },
    async follow(sessionId, after, onEvents, signal) {
      const response = await api.stream(
        `/sessions/${seg(sessionId)}/events?after=${after}`,
        signal,
      );
      if (!response.body) return;
      await readEventStream<SessionEvent>(response.body, { events: onEvents });
    },
    async close() {},
  };
}

/** The embedded store of the project at `dir`, when it has one. */
export function embeddedSource(dir: string): LogSource | undefined {
  const path = join(resolve(dir), ".opencomputer", "data.db");
  if (!existsSync(path)) return undefined;
  const store = createSqliteStore({ path });
  return {
    label: path,
    async sessions(agentId) {
      const rows = await store.listSessions({
        limit: LOG_SESSIONS,
        ...(agentId ? { agentId } : {}),
      });
      return rows.map((s) => ({ id: s.id, agentId: s.agentId }));
    },
    async session(id) {
      const s = await store.getSession(id);
      if (!s) {
        throw new OpenComputerError("not_found", `No session ${id} in ${path}`, {
          path: "--session",
        });
      }
      return { id: s.id, agentId: s.agentId };
    },
    events: (sessionId, after) => store.readEvents(sessionId, after, EVENT_PAGE),
    close: () => store.close(),
  };
}

/**
 * `--local` reads the embedded store, `--server` the server; by default the server when one is
 * configured (environment or `opencomputer link`), else the embedded store when it exists.
 */
export function openLogSource(
  dir: string,
  choice: { local?: boolean; server?: boolean },
  env: NodeJS.ProcessEnv = process.env,
): LogSource {
  if (choice.local && choice.server) {
    throw new OpenComputerError("usage", "--local and --server exclude each other");
  }
  if (!choice.local) {
    try {
      return serverSource(ApiClient.resolve(dir, env));
    } catch (error) {
      if (choice.server || !(error instanceof OpenComputerError)) throw error;
    }
  }
  const local = embeddedSource(dir);
  if (local) return local;
  throw new OpenComputerError(
    "usage",
    `No server for this project and no embedded store at ${join(resolve(dir), ".opencomputer", "data.db")}: run a session first (opencomputer session / dev), or link a server (opencomputer login, opencomputer link)`,
  );
}
