// Three `opencomputer server --store postgres://…` processes on one private cluster: each says
// at start-up which store pipeline it chose; an SSE follower on one process sees what the others
// write; a process SIGKILLed mid-turn loses its sessions to the others and no turn, call or
// result is lost or doubled; a process paused past its lease (SIGSTOP) is fenced out when it
// resumes. Lease timings are shortened by env (servers.ts TIMINGS) so takeovers happen within
// ~1.5 s.
import type { EventRecord } from "@opencomputer/runtime";
import { StoreError } from "@opencomputer/runtime";
import { type PrivateCluster, startPrivateCluster } from "@opencomputer/testkit/postgres-cluster";
import { ev } from "@opencomputer/testkit/store-fixtures";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPostgresStore, type PostgresStore } from "../../src/index.ts";
import { sessionViolations } from "./checks.ts";
import {
  type ClusterProject,
  createSessionOn,
  KEY,
  kill,
  prepareProject,
  readRuns,
  type ServerProcess,
  sendTurn,
  startServer,
  until,
} from "./servers.ts";

let cluster: PrivateCluster;
let store: PostgresStore;
let project: ClusterProject;
const servers: ServerProcess[] = [];
const interrupted = new Set<number>();

beforeAll(async () => {
  cluster = await startPrivateCluster();
  const url = cluster.connectionString(await cluster.createDatabase());
  project = prepareProject("cluster");
  // The first builds the project; the other two find the same deployment (builds are
  // idempotent and written by rename, so their rebuilds change nothing).
  servers.push(await startServer("a", project, url));
  servers.push(...(await Promise.all(["b", "c"].map((n) => startServer(n, project, url)))));
  store = await createPostgresStore({ connectionString: url, notify: false });
}, 120_000);

afterAll(async () => {
  for (const s of servers) {
    s.child.kill("SIGCONT");
    await kill(s);
  }
  await store?.close();
  await cluster?.stop();
  project?.remove();
});

const alive = () => servers.filter((s) => s.child.exitCode === null && s.child.signalCode === null);
const byRuntime = (runtimeId: string) => servers.find((s) => s.runtimeId === runtimeId);
const SETTLED = new Set(["completed", "failed", "cancelled"]);

async function allSettled(sessionIds: string[]): Promise<true | undefined> {
  for (const id of sessionIds) {
    const turns = await store.listTurns(id);
    if (turns.length === 0 || turns.some((t) => !SETTLED.has(t.status))) return undefined;
  }
  return true;
}

/** An open SSE stream: `until(stop)` reads frames until `stop` accepts the events so far. */
async function follow(server: ServerProcess, sessionId: string) {
  const abort = new AbortController();
  const response = await fetch(`${server.url}/sessions/${sessionId}/events`, {
    headers: { "x-api-key": KEY, accept: "text/event-stream" },
    signal: abort.signal,
  });
  expect(response.headers.get("content-type")).toContain("text/event-stream");
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  const events: EventRecord[] = [];
  let buffer = "";
  return {
    async until(stop: (events: EventRecord[]) => boolean): Promise<EventRecord[]> {
      while (!stop(events)) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += decoder.decode(value, { stream: true });
        let end = buffer.indexOf("\n\n");
        while (end >= 0) {
          const data = buffer
            .slice(0, end)
            .split("\n")
            .find((line) => line.startsWith("data: "));
          if (data) events.push(JSON.parse(data.slice(6)) as EventRecord);
          buffer = buffer.slice(end + 2);
          end = buffer.indexOf("\n\n");
        }
      }
      return events;
    },
    close: () => abort.abort(),
  };
}

describe("three server processes on one PostgreSQL", () => {
  it("each process says at start-up which pipeline its store chose, and why", async () => {
    // The test cluster runs with fsync off: commits never wait, so nothing is timed.
    const line =
      "Store: PostgreSQL, pipelined on up to 2 connections filled to 32 " +
      "(commits do not wait for a disk flush)";
    for (const server of servers) {
      await until(`${server.name}'s store line`, () =>
        server.output().includes(line) ? true : undefined,
      );
    }
  });

  it("an SSE follower on one process sees every event written by the others, in order", async () => {
    const [a, b] = servers as [ServerProcess, ServerProcess];
    const sessionId = await createSessionOn(b);
    const stream = await follow(a, sessionId);
    // The stream has sent what was there (session.created) and now waits for news.
    await stream.until((events) => events.length >= 1);
    // Written by b (and run by whichever runtime claims it): a hears of it only via NOTIFY,
    // since with a shared signal the stream reads the store only when woken.
    await sendTurn(b, sessionId);
    let seen: EventRecord[];
    try {
      seen = await stream.until((events) => events.some((e) => e.type === "turn.completed"));
    } finally {
      stream.close();
    }
    expect(seen.map((e) => e.seq)).toEqual(seen.map((_, i) => i + 1));
    const stored = await store.readEvents(sessionId, 0, 500);
    expect(seen.map((e) => e.id)).toEqual(stored.slice(0, seen.length).map((e) => e.id));
    expect(seen.some((e) => e.type === "message.received")).toBe(true);
  }, 90_000);

  it("SIGKILL mid-turn: every turn settles on the survivors, nothing lost or doubled", async () => {
    const sessionIds: string[] = [];
    for (let i = 0; i < 6; i++) {
      const via = servers[i % 3]!;
      const id = await createSessionOn(via);
      sessionIds.push(id);
      await sendTurn(via, id);
    }
    // A process with a tool call in flight: kill it there.
    const open = await until("a tool run in flight", async () => {
      const runs = readRuns(project).filter((r) => sessionIds.includes(r.sessionId));
      return runs.find(
        (r) =>
          r.phase === "start" &&
          !runs.some((d) => d.phase === "done" && d.toolCallId === r.toolCallId),
      );
    });
    // Kill whoever holds that session now (on a loaded machine a lease may already have moved).
    const before = await store.getSession(open.sessionId);
    const victim = byRuntime(before!.lease!.runtimeId)!;
    interrupted.add(victim.pid);
    await kill(victim);

    await until("every turn to settle", () => allSettled(sessionIds));
    const runs = readRuns(project);
    const violations: string[] = [];
    for (const id of sessionIds) {
      violations.push(...(await sessionViolations(store, id, runs, interrupted)));
    }
    expect(violations).toEqual([]);

    // The killed process's session was taken over by another runtime and resumed.
    const events = await store.readEvents(open.sessionId, 0, 500);
    const disconnected = events.filter((e) => e.type === "runtime.disconnected");
    expect(disconnected.length).toBeGreaterThanOrEqual(1);
    expect((disconnected[0]!.data as { runtimeId: string }).runtimeId).not.toBe(victim.runtimeId);

    // A commit carrying the dead runtime's fence is refused and writes nothing.
    const stale = store.apply(open.sessionId, {
      fence: { runtimeId: victim.runtimeId, epoch: before!.lease!.epoch },
      ops: [],
      events: [ev("tool.completed", { callId: open.toolCallId })],
    });
    await expect(stale).rejects.toMatchObject({ code: "stale_epoch" });
    await expect(stale).rejects.toBeInstanceOf(StoreError);
    expect((await store.readEvents(open.sessionId, 0, 500)).length).toBe(events.length);
  }, 90_000);

  it("SIGSTOP past the lease: another process takes over; resumed, its writes are refused", async () => {
    const [first] = alive();
    const sessionId = await createSessionOn(first!);
    await sendTurn(first!, sessionId);
    // Pause the lease holder while it runs a tool call.
    const { running, lease } = await until("a tool run in flight", async () => {
      const runs = readRuns(project).filter((r) => r.sessionId === sessionId);
      const open = runs.find(
        (r) =>
          r.phase === "start" &&
          !runs.some((d) => d.phase === "done" && d.toolCallId === r.toolCallId),
      );
      const lease = open && (await store.getSession(sessionId))?.lease;
      return lease && byRuntime(lease.runtimeId)?.pid === open.pid
        ? { running: open, lease }
        : undefined;
    });
    const paused = byRuntime(lease.runtimeId)!;
    interrupted.add(paused.pid);
    paused.child.kill("SIGSTOP");

    const takeover = await until("another runtime to take the session", async () => {
      const events = await store.readEvents(sessionId, 0, 500);
      return events.find((e) => e.type === "runtime.disconnected");
    });
    expect((takeover.data as { runtimeId: string }).runtimeId).not.toBe(paused.runtimeId);
    paused.child.kill("SIGCONT");

    await until("the turn to settle", () => allSettled([sessionId]));
    // The resumed process finished the call it was running, and its commit was refused: the
    // log holds exactly one completion per call (checked below), written by the new holder.
    await until("the resumed process to finish its call", () =>
      readRuns(project).find(
        (r) => r.pid === paused.pid && r.toolCallId === running.toolCallId && r.phase === "done",
      ),
    );
    const runs = readRuns(project);
    expect(await sessionViolations(store, sessionId, runs, interrupted)).toEqual([]);
    const completions = (await store.readEvents(sessionId, 0, 500)).filter(
      (e) =>
        e.type === "tool.completed" &&
        (e.data as { callId?: string }).callId === running.toolCallId,
    );
    expect(completions).toHaveLength(1);

    // It gave the session up: it holds no lease on it and started no run there after resuming.
    const resumedAt = takeover.timestamp;
    const after = runs.filter(
      (r) =>
        r.pid === paused.pid &&
        r.sessionId === sessionId &&
        r.phase === "start" &&
        r.at > Date.parse(resumedAt),
    );
    expect(after).toEqual([]);
    expect((await store.getSession(sessionId))!.lease?.runtimeId).not.toBe(paused.runtimeId);
    await expect(
      store.apply(sessionId, { fence: lease, ops: [], events: [ev("late", {})] }),
    ).rejects.toMatchObject({ code: "stale_epoch" });
    expect(paused.child.exitCode).toBeNull();
  }, 90_000);
});
