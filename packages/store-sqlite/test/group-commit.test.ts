// Group commit: every acknowledged change survives a killed process through the commit journal,
// even though SQLite had not committed it; other connections see changes once a group commits.
import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { crc32 } from "node:zlib";
import type { Store } from "@opencomputer/runtime";
import { sessionRecord, turnRecord } from "@opencomputer/testkit/store-conformance";
import { ev } from "@opencomputer/testkit/store-fixtures";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createSqliteStore, type SqliteStore } from "../src/index.ts";

const FIXTURES = fileURLToPath(new URL("./fixtures/", import.meta.url));
const OLD = "2020-01-01T00:00:00.000Z";

async function createSession(store: Store, id: string): Promise<void> {
  await store.createSession(sessionRecord({ id }), [ev("session.created", null)]);
}

/** What a plain SQLite connection (no journal) sees as committed. */
function committedEvents(path: string, sessionId: string): number {
  const raw = new Database(path, { readonly: true });
  try {
    return (
      raw.prepare("SELECT count(*) AS n FROM events WHERE session_id = ?").get(sessionId) as {
        n: number;
      }
    ).n;
  } finally {
    raw.close();
  }
}

function runWriter(path: string, sessionId: string, count: number, then: "exit" | "hold" = "exit") {
  const child: ChildProcess = spawn(
    process.execPath,
    ["--import", "tsx", join(FIXTURES, "acked-writer.ts"), path, sessionId, String(count), then],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  let output = "";
  let stderr = "";
  child.stdout!.on("data", (d: Buffer) => {
    output += String(d);
  });
  child.stderr!.on("data", (d: Buffer) => {
    stderr += String(d);
  });
  // "close", not "exit": a killed child's last lines may still be in the pipe at "exit", and
  // the acknowledged batches are counted from them.
  const exit = new Promise<{ code: number | null; signal: string | null }>((resolve) => {
    child.on("close", (code, signal) => resolve({ code, signal }));
  });
  return {
    child,
    exit,
    output: () => output,
    stderr: () => stderr,
    acked: () => [...output.matchAll(/acked (\d+)/g)].map((m) => Number(m[1])),
  };
}

describe("SqliteStore group commit", () => {
  let dir: string;
  let path: string;
  const open: SqliteStore[] = [];
  const openStore = (groupCommitMs?: number) => {
    const store = createSqliteStore({ path, ...(groupCommitMs ? { groupCommitMs } : {}) });
    open.push(store);
    return store;
  };

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "oc-group-"));
    path = join(dir, "store.db");
  });
  afterEach(async () => {
    for (const store of open.splice(0)) await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("keeps every acknowledged change of a process killed before SQLite committed any", async () => {
    // Open before the writer starts: it must see the killed writer's changes without writing.
    const watcher = openStore();
    // 1,000 batches are 3,000 statements, below the 5,000 at which a group commits anyway: a
    // parent slowed down by other tests still kills the writer before SQLite holds anything.
    const writer = runWriter(path, "ses_k", 1_000, "hold");
    await new Promise<void>((resolve, reject) => {
      const timer = setInterval(() => {
        if (writer.acked().length >= 300) {
          clearInterval(timer);
          writer.child.kill("SIGKILL");
          resolve();
        } else if (writer.child.exitCode !== null) {
          clearInterval(timer);
          reject(new Error(`the writer exited early: ${writer.output()} ${writer.stderr()}`));
        }
      }, 2);
    });
    expect((await writer.exit).signal).toBe("SIGKILL");
    const acked = writer.acked();
    // The file itself holds none of it: only the journal does.
    expect(committedEvents(path, "ses_k")).toBe(0);
    expect(statSync(`${path}-oclog`).size).toBeGreaterThan(0);

    const seen = await watcher.readEvents("ses_k", 0, 1_000_000);
    expect(seen.length).toBeGreaterThanOrEqual(acked.length + 1);
    await watcher.close();
    open.splice(0);
    const store = openStore();
    const events = await store.readEvents("ses_k", 0, 1_000_000);
    expect(events).toEqual(seen);
    const messages = await store.listMessages("ses_k");
    // Every acknowledged batch is there, in order, gapless; at most one more (written, killed
    // before it could print) may follow.
    const batches = events
      .filter((e) => (e.type as string) === "batch")
      .map((e) => (e.data as { i: number }).i);
    expect(batches.slice(0, acked.length)).toEqual(acked);
    expect(batches.length - acked.length).toBeLessThanOrEqual(1);
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    expect(messages.map((m) => m.id)).toEqual(batches.map((i) => `msg_${i}`));
    expect(messages[5]!.content).toEqual({ i: 5, text: "é🧪".repeat(5) });
    const session = (await store.getSession("ses_k"))!;
    expect(session.lastSeq).toBe(events.length);
    expect(session.lease?.runtimeId).toBe("rt_child");
    // Replayed once and committed: a plain connection sees it, and a reopen changes nothing.
    expect(committedEvents(path, "ses_k")).toBe(events.length);
    await store.close();
    open.splice(0);
    const again = openStore();
    expect((await again.readEvents("ses_k", 0, 1_000_000)).length).toBe(events.length);
    const [next] = await again.apply("ses_k", { ops: [], events: [ev("x", null)] });
    expect(next!.seq).toBe(events.length + 1);
  });

  it("ignores a record cut short at the end of the journal, and writes on after it", async () => {
    const writer = runWriter(path, "ses_t", 20);
    expect(await writer.exit).toEqual({ code: 0, signal: null });
    const journal = `${path}-oclog`;
    const bytes = readFileSync(journal);
    // Cut the last record (batch 19) in half, as a crash mid-write would.
    writeFileSync(journal, bytes.subarray(0, bytes.length - 40));
    const store = openStore();
    const batches = (await store.readEvents("ses_t", 0, 1000))
      .filter((e) => (e.type as string) === "batch")
      .map((e) => (e.data as { i: number }).i);
    expect(batches).toEqual(Array.from({ length: 19 }, (_, i) => i));
    await store.apply("ses_t", { ops: [], events: [ev("after", null)] });
    await store.close();
    open.splice(0);
    const reopened = openStore();
    const types = (await reopened.readEvents("ses_t", 0, 1000)).map((e): string => e.type);
    expect(types.at(-1)).toBe("after");
    expect(types.filter((t) => t === "batch")).toHaveLength(19);
  });

  it("never replays a journal another database file left behind", async () => {
    const writer = runWriter(path, "ses_old", 50);
    expect(await writer.exit).toEqual({ code: 0, signal: null });
    // The database is deleted and made again; the old journal, full of unapplied records, stays.
    for (const suffix of ["", "-wal", "-shm"]) rmSync(`${path}${suffix}`, { force: true });
    expect(statSync(`${path}-oclog`).size).toBeGreaterThan(0);
    const store = openStore();
    expect(await store.getSession("ses_old")).toBeUndefined();
    await createSession(store, "ses_new");
    expect((await store.readEvents("ses_new", 0, 10)).map((e) => e.type)).toEqual([
      "session.created",
    ]);
    await store.close();
    open.splice(0);
    const reopened = openStore();
    expect(await reopened.getSession("ses_old")).toBeUndefined();
    expect((await reopened.getSession("ses_new"))?.lastSeq).toBe(1);
  });

  it("shows a change to other connections once its group commits", async () => {
    const store = openStore(30);
    await createSession(store, "ses_v");
    // Opening a group committed nothing yet; the creating write's group is open.
    await store.apply("ses_v", { ops: [], events: [ev("a", null)] });
    const seenAtOnce = committedEvents(path, "ses_v");
    await new Promise((r) => setTimeout(r, 120));
    expect(committedEvents(path, "ses_v")).toBe(2);
    // The same process reads its own changes at once.
    expect((await store.readEvents("ses_v", 0, 10)).length).toBe(2);
    expect(seenAtOnce).toBeLessThan(2);
  });

  it("lets two stores on one file in one process see each other's changes at once", async () => {
    const a = openStore(60_000);
    const b = openStore(60_000);
    await createSession(a, "ses_1");
    expect((await b.getSession("ses_1"))?.lastSeq).toBe(1);
    await b.apply("ses_1", { ops: [], events: [ev("from_b", null)] });
    // A created the session, so it could answer this from its rows written behind; B's write
    // committed A's group first, so A reads SQLite.
    expect((await a.getSession("ses_1"))?.lastSeq).toBe(2);
    expect((await a.readEvents("ses_1", 0, 10)).map((e) => e.type)).toEqual([
      "session.created",
      "from_b",
    ]);
    await createSession(a, "ses_2");
    await a.apply("ses_2", { ops: [], events: [ev("from_a", null)] });
    expect((await b.getSession("ses_2"))?.lastSeq).toBe(2);
    await b.apply("ses_2", { ops: [], events: [ev("from_b", null)] });
    expect((await a.getSession("ses_2"))?.lastSeq).toBe(3);
  });

  it("undoes a change that fails after changing rows, and keeps the group's earlier changes", async () => {
    const store = openStore(60_000);
    await createSession(store, "ses_u");
    await store.apply("ses_u", { ops: [], events: [ev("kept", null)] });
    const message = (id: string) => ({
      type: "message.insert" as const,
      message: {
        id,
        sessionId: "ses_u",
        turnId: "t",
        role: "user" as const,
        content: id,
        createdAt: OLD,
      },
    });
    const failed = await store
      .apply("ses_u", { ops: [message("m1"), message("m2"), message("m1")], events: [] })
      .catch((e: unknown) => e);
    expect((failed as { code?: string }).code).toBe("duplicate");
    await store.apply("ses_u", { ops: [message("m3")], events: [ev("after", null)] });
    const check = async (s: Store) => {
      expect((await s.readEvents("ses_u", 0, 10)).map((e) => [e.seq, e.type])).toEqual([
        [1, "session.created"],
        [2, "kept"],
        [3, "after"],
      ]);
      expect((await s.listMessages("ses_u")).map((m) => m.id)).toEqual(["m3"]);
    };
    await check(store);
    await store.close();
    open.splice(0);
    await check(openStore());
  });

  it("refuses a value that is not JSON, and keeps what was acknowledged", async () => {
    const store = openStore();
    await createSession(store, "ses_b");
    const error = await store
      .apply("ses_b", { ops: [], events: [ev("big", 10n)] })
      .catch((e: unknown) => e);
    // Refused as it is encoded, before any row or journal record is written.
    expect(error).toBeInstanceOf(TypeError);
    expect((error as Error).message).toMatch(/BigInt/);
    expect((await store.readEvents("ses_b", 0, 10)).map((e) => e.type)).toEqual([
      "session.created",
    ]);
  });

  it("undoes a change whose statement changed rows but cannot be journaled", async () => {
    const store = openStore(60_000);
    await createSession(store, "ses_n");
    await store.apply("ses_n", { ops: [], events: [ev("kept", null)] });
    // A BigInt binds (the row is inserted) but has no place in the journal: refused after the
    // statement ran, as the first statement of its change.
    const turn = turnRecord("ses_n", { id: "turn_big", steps: 10n as never });
    const error = await store
      .apply("ses_n", { ops: [{ type: "turn.insert", turn }], events: [] })
      .catch((e: unknown) => e);
    expect((error as { code?: string }).code).toBe("invalid_value");
    const check = async (s: Store) => {
      expect(await s.listTurns("ses_n")).toEqual([]);
      expect((await s.readEvents("ses_n", 0, 10)).map((e) => e.type)).toEqual([
        "session.created",
        "kept",
      ]);
    };
    await check(store);
    await store.close();
    open.splice(0);
    await check(openStore());
  });

  it("replays a journal record in the JSON format earlier versions wrote", async () => {
    const store = openStore();
    await createSession(store, "ses_j");
    await store.close();
    open.splice(0);
    const raw = new Database(path);
    const state = raw.prepare("SELECT applied_seq, file_id FROM journal_state").get() as {
      applied_seq: number;
      file_id: string;
    };
    raw.close();
    const payload = Buffer.from(
      JSON.stringify([
        [
          "INSERT INTO events (session_id, seq, id, timestamp, turn_id, type, data) VALUES (?, ?, ?, ?, ?, ?, ?)",
          ["ses_j", 2, "evt_legacy", OLD, null, "legacy", '{"from":"json"}'],
        ],
        ["UPDATE sessions SET last_seq = ? WHERE id = ?", [2, "ses_j"]],
      ]),
    );
    const header = Buffer.alloc(24);
    header.writeUInt32LE(payload.length, 0);
    header.writeUInt32LE(crc32(payload), 4);
    header.writeDoubleLE(state.applied_seq + 1, 8);
    Buffer.from(state.file_id, "hex").copy(header, 16);
    writeFileSync(`${path}-oclog`, Buffer.concat([header, payload]));
    const reopened = openStore();
    expect((await reopened.readEvents("ses_j", 0, 10)).map((e) => [e.type, e.data])).toEqual([
      ["session.created", null],
      ["legacy", { from: "json" }],
    ]);
    expect((await reopened.getSession("ses_j"))?.lastSeq).toBe(2);
    expect(committedEvents(path, "ses_j")).toBe(2);
  });

  it("commits every change on its own, with no journal, when groupCommitMs is 0", async () => {
    const store = createSqliteStore({ path, groupCommitMs: 0 });
    open.push(store);
    await createSession(store, "ses_0");
    expect(committedEvents(path, "ses_0")).toBe(1);
    expect(() => statSync(`${path}-oclog`)).toThrow();
  });
});
