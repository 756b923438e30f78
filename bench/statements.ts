// Statements (round trips, for PostgreSQL) each store runs for one session with one turn of the
// benchmark scenario, by kind. Counted by wrapping the drivers (better-sqlite3's prepared
// statements and `exec`, node-postgres' `Client#query`) around real runs: a count, not a time,
// so it does not move with the machine's noise. The idle lease release is included (the worker
// gives its lease up `idleReleaseMs` after the turn).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Store } from "@opencomputer/runtime";
import { createPostgresStore } from "@opencomputer/store-postgres";
import { createSqliteStore } from "@opencomputer/store-sqlite";
import { startPrivateCluster } from "@opencomputer/testkit/postgres-cluster";
import Database from "better-sqlite3";
import pg from "pg";
import { supportRuntime } from "./engine-fixture.ts";
import { AGENT_ID, USER_TEXT } from "./scenario.ts";

export type StatementKind = "read" | "write" | "transaction" | "notify";

export interface StatementCount {
  store: "sqlite" | "postgres";
  sessions: number;
  /**
   * Mean per session (create + one turn + the idle lease release). `notify` counts only
   * statements that do nothing else; a write that also queues the NOTIFY is a write.
   */
  perSession: Record<StatementKind, number> & { total: number };
  /** The most frequent statement texts (first 80 characters), per session. */
  top: { sql: string; perSession: number }[];
}

function kindOf(sql: string): StatementKind {
  const s = sql.trimStart().toUpperCase();
  if (/^(BEGIN|COMMIT|ROLLBACK|SAVEPOINT|RELEASE)/.test(s)) return "transaction";
  // A write that also queues a NOTIFY (PostgreSQL folds them) counts as a write.
  if (/^(INSERT|UPDATE|DELETE)/.test(s) || (s.startsWith("WITH") && /\b(UPDATE|INSERT)\b/.test(s)))
    return "write";
  if (s.includes("OC_WRITE(")) return "write";
  if (s.includes("PG_NOTIFY(")) return "notify";
  return "read";
}

class Counter {
  on = false;
  readonly counts = new Map<string, number>();
  add(sql: string): void {
    if (!this.on) return;
    const key = sql.replace(/\s+/g, " ").trim();
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
  }
  result(store: StatementCount["store"], sessions: number): StatementCount {
    const perSession = { read: 0, write: 0, transaction: 0, notify: 0, total: 0 };
    for (const [sql, n] of this.counts) {
      perSession[kindOf(sql)] += n / sessions;
      perSession.total += n / sessions;
    }
    const top = [...this.counts]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 16)
      .map(([sql, n]) => ({ sql: sql.slice(0, 110), perSession: n / sessions }));
    return { store, sessions, perSession, top };
  }
}

/** Plays `warmup` then `sessions` sessions on `store`, counting only the latter. */
async function play(store: Store, counter: Counter, sessions: number): Promise<void> {
  const idleReleaseMs = 20;
  const runtime = supportRuntime(store, { idleReleaseMs });
  await runtime.start();
  const settle = () => new Promise((resolve) => setTimeout(resolve, idleReleaseMs * 10));
  const one = async () => {
    const { session } = await runtime.sessions.create({ agentId: AGENT_ID });
    const sent = await runtime.sessions.sendTurn(session.id, { text: USER_TEXT });
    const turn = await runtime.sessions.waitForTurn(session.id, sent.turnId);
    if (turn.status !== "completed") throw new Error(`turn ${turn.id} ended ${turn.status}`);
  };
  try {
    for (let i = 0; i < 3; i++) await one();
    await settle();
    counter.on = true;
    for (let i = 0; i < sessions; i++) await one();
    await settle();
    counter.on = false;
  } finally {
    await runtime.close();
  }
}

export async function countSqliteStatements(sessions = 50): Promise<StatementCount> {
  const counter = new Counter();
  const proto = Database.prototype as unknown as {
    prepare(sql: string): Database.Statement;
    exec(sql: string): unknown;
  };
  const { prepare, exec } = proto;
  proto.prepare = function (this: Database.Database, sql: string) {
    const stmt = prepare.call(this, sql);
    for (const method of ["run", "get", "all", "iterate"] as const) {
      const original = stmt[method] as (...args: unknown[]) => unknown;
      (stmt as unknown as Record<string, unknown>)[method] = function (
        this: unknown,
        ...args: unknown[]
      ) {
        counter.add(sql);
        return original.apply(this, args);
      };
    }
    return stmt;
  };
  proto.exec = function (this: Database.Database, sql: string) {
    counter.add(sql);
    return exec.call(this, sql);
  };
  const dir = mkdtempSync(join(tmpdir(), "oc-bench-stmts-"));
  try {
    const store = createSqliteStore({ path: join(dir, "data.db") });
    try {
      await play(store, counter, sessions);
    } finally {
      await store.close();
    }
  } finally {
    proto.prepare = prepare;
    proto.exec = exec;
    rmSync(dir, { recursive: true, force: true });
  }
  return counter.result("sqlite", sessions);
}

export async function countPostgresStatements(sessions = 20): Promise<StatementCount> {
  const counter = new Counter();
  const proto = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const query = proto.query;
  proto.query = function (this: pg.Client, ...args: unknown[]) {
    const q = args[0] as string | { text?: string } | undefined;
    counter.add(typeof q === "string" ? q : (q?.text ?? ""));
    return query.apply(this, args);
  };
  const cluster = await startPrivateCluster();
  try {
    const database = await cluster.createDatabase();
    const store = await createPostgresStore({
      connectionString: cluster.connectionString(database),
    });
    try {
      await play(store, counter, sessions);
    } finally {
      await store.close();
    }
  } finally {
    proto.query = query;
    await cluster.stop();
  }
  return counter.result("postgres", sessions);
}

export function statementsTable(results: StatementCount[]): string {
  const lines: string[] = [];
  const f = (n: number) => n.toFixed(1).padStart(7);
  lines.push(
    `${"store".padEnd(10)}${"total".padStart(7)}${"reads".padStart(7)}${"writes".padStart(7)}` +
      `${"tx".padStart(7)}${"notify".padStart(7)}   (statements per session + turn)`,
  );
  for (const r of results) {
    const p = r.perSession;
    lines.push(
      `${r.store.padEnd(10)}${f(p.total)}${f(p.read)}${f(p.write)}${f(p.transaction)}${f(p.notify)}`,
    );
  }
  for (const r of results) {
    lines.push("", `${r.store}, most frequent:`);
    for (const t of r.top) lines.push(`  ${t.perSession.toFixed(2).padStart(5)}  ${t.sql}`);
  }
  return lines.join("\n");
}
