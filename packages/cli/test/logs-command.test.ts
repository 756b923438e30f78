// `opencomputer logs` against a running `opencomputer dev` server and against the same project's
// embedded store read directly (while the server writes it): one line per event, JSON Lines,
// the filters, and --follow picking up a turn sent after it started.

import { join, resolve } from "node:path";
import type { SessionEvent } from "@opencomputer/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { logsCommand, matches, parseSince } from "../src/commands/logs.ts";
import { type DevServer, startDev } from "./dev-server.ts";

const repo = resolve(import.meta.dirname, "../../..");
let dev: DevServer | undefined;
let project: string;
let sessionId: string;

async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const response = await fetch(`${dev!.url}${path}`, {
    method,
    headers: {
      "x-api-key": dev!.key,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  expect(response.status).toBeLessThan(300);
  return (await response.json()) as T;
}

async function completedTurn(text: string): Promise<string> {
  const { turnId } = await api<{ turnId: string }>("POST", `/sessions/${sessionId}/turns`, {
    input: text,
  });
  for (let i = 0; i < 200; i++) {
    const { events } = await api<{ events: SessionEvent[] }>(
      "GET",
      `/sessions/${sessionId}/events?after=0`,
    );
    if (events.some((e) => e.type === "turn.completed" && e.turnId === turnId)) return turnId;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`turn ${turnId} did not complete`);
}

beforeAll(async () => {
  dev = await startDev("logs");
  project = join(repo, "test-output", `logs-${process.pid}`);
  const { session } = await api<{ session: { id: string } }>("POST", "/sessions", {
    agentId: "support@development",
  });
  sessionId = session.id;
  await completedTurn("Where is A1?");
}, 60_000);

afterAll(() => dev?.stop());

const serverEnv = () => ({ OPENCOMPUTER_API_URL: dev!.url, OPENCOMPUTER_API_KEY: dev!.key });

async function logs(argv: string[], env: NodeJS.ProcessEnv, signal?: AbortSignal) {
  const lines: string[] = [];
  const code = await logsCommand(argv, {
    dir: project,
    env,
    write: (line) => lines.push(line),
    ...(signal ? { signal } : {}),
  });
  return { code, lines };
}

const SOURCES = [
  ["a server", () => serverEnv(), [] as string[]],
  ["the embedded store", () => ({}), ["--local"]],
] as const;

describe.each(SOURCES)("opencomputer logs from %s", (_name, env, extra) => {
  it("prints one line per event: time, session, agent, type, summary", async () => {
    const { code, lines } = await logs([...extra], env());
    expect(code).toBe(0);
    const mine = lines.filter((l) => l.includes(sessionId));
    expect(mine.length).toBeGreaterThan(3);
    const completed = mine.find((l) => / turn\.completed /.test(l))!;
    expect(completed).toMatch(
      new RegExp(`^\\d{4}-\\d{2}-\\d{2}T[\\d:.]+Z  ${sessionId}  support  turn\\.completed`),
    );
    const rendered = mine.find((l) => l.includes("agent.rendered"))!;
    expect(rendered).toContain("model ");
  });

  it("--json prints one event per line; --session, --type and --since filter", async () => {
    const all = await logs([...extra, "--json", "--session", sessionId], env());
    const events = all.lines.map((l) => JSON.parse(l) as SessionEvent & { agentId: string });
    expect(events.every((e) => e.sessionId === sessionId && e.agentId === "support")).toBe(true);
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));

    const typed = await logs([...extra, "--json", "--type", "turn.*,message.received"], env());
    const types = new Set(typed.lines.map((l) => (JSON.parse(l) as SessionEvent).type));
    expect([...types].sort()).toEqual(
      [...types].filter((t) => t.startsWith("turn.") || t === "message.received").sort(),
    );
    expect(types.has("turn.completed")).toBe(true);

    const future = await logs([...extra, "--since", "2999-01-01T00:00:00Z"], env());
    expect(future.lines).toEqual([]);
    const other = await logs([...extra, "--agent", "nobody"], env());
    expect(other.lines).toEqual([]);
  });

  it("--follow prints events of a turn sent after it started, until stopped", async () => {
    const stop = new AbortController();
    const lines: string[] = [];
    const following = logsCommand([...extra, "--follow", "--json", "--session", sessionId], {
      dir: project,
      env: env(),
      signal: stop.signal,
      write: (line) => lines.push(line),
    });
    const before = () => lines.length;
    for (let i = 0; i < 100 && before() === 0; i++) await new Promise((r) => setTimeout(r, 50));
    const seen = before();
    const turnId = await completedTurn("And B2?");
    for (let i = 0; i < 200; i++) {
      if (lines.some((l) => l.includes('"turn.completed"') && l.includes(turnId))) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    stop.abort();
    expect(await following).toBe(0);
    const fresh = lines.slice(seen).map((l) => JSON.parse(l) as SessionEvent);
    expect(fresh.some((e) => e.type === "turn.completed" && e.turnId === turnId)).toBe(true);
    // No event twice.
    const seqs = lines.map((l) => (JSON.parse(l) as SessionEvent).seq);
    expect(new Set(seqs).size).toBe(seqs.length);
  });
});

describe("logs filters", () => {
  const event = { type: "tool.failed", timestamp: "2026-12-03T10:00:00.000Z" } as SessionEvent;
  it("matches exact types, families and times", () => {
    expect(matches(event, { types: ["tool.failed"] })).toBe(true);
    expect(matches(event, { types: ["tool.*"] })).toBe(true);
    expect(matches(event, { types: ["tool."] })).toBe(true);
    expect(matches(event, { types: ["tool"] })).toBe(false);
    expect(matches(event, { types: [], since: Date.parse("2026-12-03T10:00:01Z") })).toBe(false);
  });

  it("reads --since as a time or a duration back from the clock", () => {
    const now = Date.parse("2026-12-03T12:00:00Z");
    expect(parseSince("2h", now)).toBe(Date.parse("2026-12-03T10:00:00Z"));
    expect(parseSince("2026-12-01T00:00:00Z", now)).toBe(Date.parse("2026-12-01T00:00:00Z"));
    expect(() => parseSince("yesterday", now)).toThrow(/--since must be/);
  });
});
