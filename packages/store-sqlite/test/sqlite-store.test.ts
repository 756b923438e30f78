import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, statSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { SessionRecord, Store, WriteOp } from "@opencomputer/runtime";
import { StoreError } from "@opencomputer/runtime";
import { sessionRecord, storeConformance } from "@opencomputer/testkit/store-conformance";
import { ev } from "@opencomputer/testkit/store-fixtures";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createSqliteStore, SCHEMA_VERSION, type SqliteStore } from "../src/index.ts";

storeConformance("sqlite", async () => {
  const dir = await mkdtemp(join(tmpdir(), "oc-store-"));
  return {
    store: createSqliteStore({ path: join(dir, "store.db") }),
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
});

const FIXTURES = fileURLToPath(new URL("./fixtures/", import.meta.url));
const OLD = "2020-01-01T00:00:00.000Z";

async function createSession(store: Store, id: string): Promise<SessionRecord> {
  const { session } = await store.createSession(sessionRecord({ id, labels: { env: "prod" } }), [
    { type: "session.created", data: { agentId: "agent_a", deploymentId: "dep_1" } },
  ]);
  return session;
}

async function everything(store: Store, sessionId: string) {
  return {
    session: await store.getSession(sessionId),
    turns: await store.listTurns(sessionId),
    messages: await store.listMessages(sessionId),
    toolCalls: await store.listToolCalls(sessionId),
    results: await store.listResults(sessionId, { limit: 1000 }),
    events: await store.readEvents(sessionId, 0, 100_000),
  };
}

function runFixture(script: string, args: string[]): ChildProcess {
  return spawn(process.execPath, ["--import", "tsx", join(FIXTURES, script), ...args], {
    stdio: ["ignore", "pipe", "pipe"],
  });
}

function exited(child: ChildProcess): Promise<{ code: number | null; signal: string | null }> {
  return new Promise((resolve) => {
    child.on("exit", (code, signal) => resolve({ code, signal }));
  });
}

describe("SqliteStore on a file", () => {
  let dir: string;
  let path: string;
  const open: SqliteStore[] = [];
  const openStore = (options: Partial<Parameters<typeof createSqliteStore>[0]> = {}) => {
    const store = createSqliteStore({ path, ...options });
    open.push(store);
    return store;
  };

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "oc-store-"));
    path = join(dir, "store.db");
  });
  afterEach(async () => {
    for (const store of open.splice(0)) await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("keeps everything across a close and reopen, and continues the seqs", async () => {
    const first = openStore();
    await createSession(first, "ses_1");
    const turn = {
      id: "turn_1",
      sessionId: "ses_1",
      input: { source: "user" as const, text: "héllo 🧪" },
      mode: "queue" as const,
      status: "queued" as const,
      outcome: null,
      error: null,
      idempotencyKey: "k",
      steps: 0,
      createdAt: OLD,
      updatedAt: OLD,
      startedAt: null,
      settledAt: null,
    };
    await first.apply("ses_1", {
      ops: [
        { type: "turn.insert", turn },
        {
          type: "message.insert",
          message: {
            id: "m1",
            sessionId: "ses_1",
            turnId: "turn_1",
            role: "user",
            content: "hi",
            createdAt: OLD,
          },
        },
      ],
      events: [{ type: "turn.queued", turnId: "turn_1", data: { mode: "queue" } }],
    });
    await first.acquireLease("ses_1", "rt_1", 60_000, 1000);
    const before = await everything(first, "ses_1");
    await first.close();

    const second = openStore();
    expect(await everything(second, "ses_1")).toStrictEqual(before);
    const [next] = await second.apply("ses_1", { ops: [], events: [ev("x", null)] });
    expect(next!.seq).toBe(3);
  });

  it("shares one file between two connections, and fences the stale one", async () => {
    const a = openStore();
    const b = openStore();
    await createSession(a, "ses_1");
    expect((await b.getSession("ses_1"))!.lastSeq).toBe(1);

    const leaseA = (await a.acquireLease("ses_1", "rt_a", 1000, 1000))!;
    expect(await b.acquireLease("ses_1", "rt_b", 1000, 1500)).toBeNull();
    const leaseB = (await b.acquireLease("ses_1", "rt_b", 1000, 2000))!;
    expect(leaseB.epoch).toBe(leaseA.epoch + 1);

    const refused = await a
      .apply("ses_1", { fence: leaseA, ops: [], events: [ev("stale", null)] })
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(StoreError);
    expect((refused as StoreError).code).toBe("stale_epoch");
    await b.apply("ses_1", { fence: leaseB, ops: [], events: [ev("fresh", null)] });
    const seen = await a.readEvents("ses_1", 0, 10);
    expect(seen.map((e) => [e.seq, e.type])).toEqual([
      [1, "session.created"],
      [2, "fresh"],
    ]);
    expect(await a.renewLease("ses_1", leaseA, 1000, 2500)).toBeNull();
  });

  it("migrates a new file opened by several processes at once", async () => {
    const children = ["ses_1", "ses_2", "ses_3", "ses_4"].map((id) =>
      runFixture("open-and-create.ts", [path, id]),
    );
    const stderr: string[] = [];
    for (const child of children) child.stderr!.on("data", (d: Buffer) => stderr.push(String(d)));
    const codes = await Promise.all(children.map(exited));
    expect(stderr.join("")).toBe("");
    expect(codes.map((c) => c.code)).toEqual([0, 0, 0, 0]);
    const store = openStore();
    expect((await store.listSessions({ limit: 10 })).map((s) => s.id).sort()).toEqual([
      "ses_1",
      "ses_2",
      "ses_3",
      "ses_4",
    ]);
    expect(store.database.pragma("user_version", { simple: true })).toBe(SCHEMA_VERSION);
  });

  it("refuses a file whose schema is newer than this build", async () => {
    const raw = new Database(path);
    raw.pragma("user_version = 999");
    raw.close();
    expect(() => openStore()).toThrow(StoreError);
  });

  it("opens in WAL mode with foreign keys on and the durability asked for", () => {
    const normal = openStore();
    expect(normal.database.pragma("journal_mode", { simple: true })).toBe("wal");
    expect(normal.database.pragma("synchronous", { simple: true })).toBe(1);
    expect(normal.database.pragma("foreign_keys", { simple: true })).toBe(1);
    expect(normal.database.pragma("busy_timeout", { simple: true })).toBeGreaterThan(0);
    const full = openStore({ durability: "full" });
    expect(full.database.pragma("synchronous", { simple: true })).toBe(2);
  });

  it("writes nothing of a large batch that fails in its last op", async () => {
    const store = openStore();
    await createSession(store, "ses_1");
    const before = await everything(store, "ses_1");
    const ops: WriteOp[] = [];
    for (let i = 0; i < 2000; i++) {
      ops.push({
        type: "message.insert",
        message: {
          id: `m${i}`,
          sessionId: "ses_1",
          turnId: "t",
          role: "user",
          content: i,
          createdAt: OLD,
        },
      });
    }
    ops.push({
      type: "message.insert",
      message: {
        id: "m0",
        sessionId: "ses_1",
        turnId: "t",
        role: "user",
        content: 0,
        createdAt: OLD,
      },
    });
    const error = await store
      .apply("ses_1", { ops, events: [ev("x", null)] })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreError);
    expect((error as StoreError).code).toBe("duplicate");
    expect(await everything(store, "ses_1")).toStrictEqual(before);

    // A record addressed to another session is refused the same way, with nothing written.
    const misaddressed = await store
      .apply("ses_1", {
        ops: [
          ops[0]!,
          { type: "session.update", patch: { status: "idle" } },
          {
            type: "message.insert",
            message: {
              id: "mx",
              sessionId: "ses_2",
              turnId: "t",
              role: "user",
              content: 0,
              createdAt: OLD,
            },
          },
        ],
        events: [ev("x", null)],
      })
      .catch((e: unknown) => e);
    expect(misaddressed).toBeInstanceOf(StoreError);
    expect(await everything(store, "ses_1")).toStrictEqual(before);
  });

  /** Starts the killed writer on ses_1 and SIGKILLs it once SQLite's WAL holds > 4 MiB. */
  async function killWhileWriting(mode: "per-commit" | "group"): Promise<string> {
    const wal = `${path}-wal`;
    const walSize = () => (existsSync(wal) ? statSync(wal).size : 0);
    const count = mode === "group" ? "100000" : "400000";
    const child = runFixture("killed-writer.ts", [path, "ses_1", count, mode]);
    const exit = exited(child);
    let output = "";
    child.stdout!.on("data", (d: Buffer) => {
      output += String(d);
    });
    await new Promise<void>((resolve, reject) => {
      const timer = setInterval(() => {
        // The rows spill pages into the WAL long before they commit: kill it then.
        if (output.includes("begin") && walSize() > 4 * 1024 * 1024) {
          clearInterval(timer);
          child.kill("SIGKILL");
          resolve();
        } else if (output.includes("flushed") || child.exitCode !== null) {
          clearInterval(timer);
          reject(new Error(`the writer finished before it could be killed: ${output}`));
        }
      }, 1);
    });
    expect((await exit).signal).toBe("SIGKILL");
    return output;
  }

  it("writes nothing of a batch whose process is killed inside its transaction", async () => {
    const store = openStore({ groupCommitMs: 0 });
    await createSession(store, "ses_1");
    const before = await everything(store, "ses_1");
    await store.close();

    expect(await killWhileWriting("per-commit")).not.toContain("done");

    const reopened = openStore();
    expect(await everything(reopened, "ses_1")).toStrictEqual(before);
    const [next] = await reopened.apply("ses_1", { ops: [], events: [ev("x", null)] });
    expect(next!.seq).toBe(2);
  });

  it("keeps a journaled batch whose process is killed while SQLite writes its rows", async () => {
    const store = openStore();
    await createSession(store, "ses_1");
    await store.close();

    // Killed with the rows half in the WAL: the journal holds the whole batch, so it is replayed.
    await killWhileWriting("group");

    const reopened = openStore();
    const messages = await reopened.listMessages("ses_1");
    expect(messages).toHaveLength(100_000);
    expect(messages[99_999]!.id).toBe("msg_99999");
    const events = await reopened.readEvents("ses_1", 0, 10);
    expect(events.map((e) => [e.seq, e.type])).toEqual([
      [1, "session.created"],
      [2, "big"],
    ]);
    const [next] = await reopened.apply("ses_1", { ops: [], events: [ev("x", null)] });
    expect(next!.seq).toBe(3);
  });
});
