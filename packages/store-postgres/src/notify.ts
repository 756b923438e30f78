// The store's side of the cross-process WorkSignal: every commit that appends events also
// NOTIFYs "session S has events up to seq N" (and "has new work" when it queued a turn without
// claiming or holding the session's lease: a lease holder runs what it queues itself). The
// NOTIFY runs inside the write's transaction (with its last statement, see write-batch.ts), and
// PostgreSQL delivers notifications only when that transaction commits, in commit order, and
// never for a rollback: a listener can only hear of a commit that a read will find.
// Payload: `<w|e> <lastSeq> <sessionId>`.
import type { SessionSignal } from "@opencomputer/runtime";
import { RELEASED_LEASES } from "./lease.ts";

const BASE_CHANNEL = "opencomputer";

/** One channel per schema, so two deployments sharing a database do not wake each other. */
export function channelFor(schema?: string): string {
  return schema === undefined ? BASE_CHANNEL : `${BASE_CHANNEL}_${schema}`.slice(0, 63);
}

export function encodePayload(sessionId: string, lastSeq: number, work: boolean): string {
  return `${work ? "w" : "e"} ${lastSeq} ${sessionId}`;
}

/** The signal a payload carries; null for one this version does not understand. */
export function decodePayload(payload: string | undefined): SessionSignal | null {
  const match = /^([we]) (\d+) (\S+)$/.exec(payload ?? "");
  if (!match) return null;
  return {
    kind: "commit",
    sessionId: match[3]!,
    lastSeq: Number(match[2]),
    work: match[1] === "w",
  };
}

/**
 * Releases leases (lease.ts RELEASED_LEASES) and announces as work each session that still has
 * queued or running turns, in the same statement: a runtime that gives a session up (shutting
 * down, idle) lets another take it at once instead of at the next recovery pass. $5: the channel.
 */
export const RELEASE_LEASES_AND_NOTIFY = `${RELEASED_LEASES}
  SELECT pg_notify($5, 'w ' || r.last_seq || ' ' || r.id) FROM released r
  WHERE EXISTS (SELECT 1 FROM turns t
                WHERE t.session_id = r.id AND t.status IN ('queued', 'running'))`;
