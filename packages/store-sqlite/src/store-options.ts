// How an embedded store is opened: its file, durability, and the group-commit window.

import Database from "better-sqlite3";
import { protectStoreFiles } from "./file-modes.ts";
import type { GroupClock } from "./group-commit.ts";
import { migrate } from "./schema.ts";

export interface SqliteStoreOptions {
  /** A file path (created when missing) or ":memory:". */
  path: string;
  /**
   * "normal" (default) survives the process being killed at any point; "full" also survives
   * power loss or an OS crash, at the cost of an fsync per commit.
   */
  durability?: "normal" | "full";
  /** How long a write waits for another connection's lock before failing. Default 10 s. */
  busyTimeoutMs?: number;
  /**
   * Group commit (file databases): each change is made durable by one append to the commit
   * journal `<path>-oclog` before the store returns, and SQLite commits the changes together
   * when the process is next idle, or at most this many ms later while it stays busy (other
   * processes see them then). 0 commits every change on its own, with no journal. Default 5.
   */
  groupCommitMs?: number;
  /**
   * The clock a group's age is measured on and the hook that ends it when the process is idle.
   * For tests that must decide when a group commits; the default is the real clock and
   * `setImmediate`.
   */
  groupClock?: GroupClock;
}

/** Opens the store's database with its pragmas and the current schema; closed again on failure. */
export function openDatabase(options: SqliteStoreOptions): Database.Database {
  protectStoreFiles(options.path);
  const db = new Database(options.path, { timeout: options.busyTimeoutMs ?? 10_000 });
  try {
    db.pragma("journal_mode = WAL");
    db.pragma(`synchronous = ${options.durability === "full" ? "FULL" : "NORMAL"}`);
    db.pragma("foreign_keys = ON");
    migrate(db);
  } catch (error) {
    db.close();
    throw error;
  }
  return db;
}
