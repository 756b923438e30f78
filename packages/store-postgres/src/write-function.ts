// Every write of the store is one call of `oc_write`, a PL/pgSQL function installed by migration
// 4: one round trip, one statement, so one implicit transaction (no BEGIN/COMMIT round trips),
// and plans PL/pgSQL caches per connection instead of a parse and plan per statement.
//
// What it does, in order, is what write-batch.ts did statement by statement: lock the session
// row (FOR UPDATE serialises all writers of the session across connections and processes), take
// or extend the lease when claiming, check the guards (fence, expectTurn, expectSession,
// expectOpenCalls) and raise the first refusal, run the ops in order, append the events with the
// next seqs, update the session row once, and queue the commit's NOTIFY. Inside a volatile
// function each statement takes a fresh snapshot (READ COMMITTED), so after the lock every guard
// reads what the session's previous writer committed. Since migration 12 the lock, the claim,
// the fence, the session-status guard and the row's update are one UPDATE when they can be
// (write-function-body.ts UPDATE_FIRST), with the steps above as its fallback.
//
// The ops come as one JSON array; each op's JSON-valued fields are JSON *strings* holding the
// value's text (encoded twice): PostgreSQL's JSON functions refuse `\u0000` inside a value they
// take apart, but a string holding `\\u0000` is just text, and `::json` keeps it exactly. Events
// come as parallel text arrays. A refusal is SQLSTATE OC001 with the store's code in DETAIL
// (pg-errors.ts turns it into a StoreError). The parts are in write-function-body.ts (in the order
// they run) and write-function-ops.ts (the ops loop); this file puts them together per migration.

import {
  appendEvents,
  GUARDS,
  GUARDS_AFTER_UPDATE_FIRST,
  lockAndClaim,
  notifyCommit,
  SESSION_UPDATE,
  SESSION_UPDATE_UNLESS_UPDATED,
  signature,
  UPDATE_FIRST,
  UPDATE_FIRST_VARIABLES,
} from "./write-function-body.ts";
import { OPS_LOOP } from "./write-function-ops.ts";

// Bit i of a mask is field i of sql-store's SESSION_FIELDS / TURN_FIELDS and approvals.ts FIELDS.
export const WRITE_FUNCTION_V4 = `
-- Every write updates its session row, and most update a turn: room left on each page lets
-- PostgreSQL update the row in place (a HOT update, no index entries to add) when no indexed
-- column changes, which is the case for every write of a turn.
ALTER TABLE sessions SET (fillfactor = 70);
ALTER TABLE turns SET (fillfactor = 70);
${writeFunction({ followed: false, sideRows: false })}`;

/**
 * Commits NOTIFY only what some process listens for: work (any process may claim it), and the
 * events of a session a reader follows (`followed_until`, renewed by that reader's signal, see
 * follows.ts). Every other commit sends nothing, so it neither queues on PostgreSQL's global
 * notification lock nor wakes every listening connection.
 */
export const FOLLOWED_SESSIONS_V9 = `
ALTER TABLE sessions ADD COLUMN followed_until bigint NOT NULL DEFAULT 0;
${writeFunction({ followed: true, sideRows: false })}`;

// PostgreSQL names a column's foreign key <table>_<column>_fkey.
const TO_SESSIONS = ["events", "messages", "turns", "tool_calls", "results", "approvals"]
  .map((table) => `ALTER TABLE ${table} DROP CONSTRAINT IF EXISTS ${table}_session_id_fkey;`)
  .join("\n");

/**
 * Migration 10: the per-row work PostgreSQL did around each appended event moves into one
 * set-based statement per write. The foreign keys to `sessions` checked, row by row (about 20
 * per turn), what `oc_write` established once when it locked the session row, and sessions are
 * never deleted; the row triggers on `events` (usage steps, the delivery outbox) ran a PL/pgSQL
 * call per event. Together they were 10–19 % of the database's CPU per turn
 * (docs/performance.md). Every row of these tables is written by `oc_write` or, for a session's
 * first events, by create-session.ts, which takes only events that need no side rows.
 */
export const WRITE_PATH_V10 = `
${TO_SESSIONS}
DROP TRIGGER IF EXISTS oc_usage_steps_from_events ON events;
DROP FUNCTION IF EXISTS oc_usage_steps_from_event();
DROP TRIGGER IF EXISTS events_to_outbox ON events;
DROP FUNCTION IF EXISTS oc_event_outbox();
${writeFunction({ followed: true, sideRows: true })}`;

/**
 * Migration 12: the session row locked, checked and updated by one statement where it can be
 * (write-function-body.ts UPDATE_FIRST), so the common write runs one statement fewer and writes
 * no separate row lock to the WAL.
 */
export const UPDATE_FIRST_V12 = `
${signature(UPDATE_FIRST_VARIABLES)}${UPDATE_FIRST}${GUARDS_AFTER_UPDATE_FIRST}${OPS_LOOP}${appendEvents(true)}${SESSION_UPDATE_UNLESS_UPDATED}${notifyCommit(true, "followed_now")}`;

interface WriteFunctionVersion {
  /** Notify events only while the session is followed (migration 9). */
  followed: boolean;
  /** Write the events' usage steps and outbox rows itself (migration 10). */
  sideRows: boolean;
}

/** `oc_write` as migration 4, 9 or 10 installs it. */
function writeFunction({ followed, sideRows }: WriteFunctionVersion): string {
  return (
    signature() +
    lockAndClaim(followed) +
    GUARDS +
    OPS_LOOP +
    appendEvents(sideRows) +
    SESSION_UPDATE +
    notifyCommit(followed)
  );
}
