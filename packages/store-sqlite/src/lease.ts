// Lease rules (invariant 2). A lease is free when there is none or it expired (expiresAt <= now);
// the holder may always extend its own lease at the same epoch; any change of holder increments
// the epoch, which is the fencing token every write of the holder carries.
import { type Lease, StoreError } from "@opencomputer/runtime";
import type { StatementCache } from "./statements.ts";

export interface LeaseRow {
  lease_runtime_id: string | null;
  lease_epoch: number | null;
  lease_expires_at: number | null;
}

/** The lease `runtimeId` gets when asking at `now`, or null when another runtime holds it. */
export function nextLease(
  current: LeaseRow,
  runtimeId: string,
  ttlMs: number,
  now: number,
): Lease | null {
  const expiresAt = now + ttlMs;
  const holder = current.lease_runtime_id;
  const epoch = current.lease_epoch ?? 0;
  if (holder === runtimeId) return { runtimeId, epoch, expiresAt };
  if (holder === null || (current.lease_expires_at ?? 0) <= now) {
    return { runtimeId, epoch: epoch + 1, expiresAt };
  }
  return null;
}

/** Where a store change reads and writes a session's lease (the row writer). */
export interface LeaseRows {
  readLease(sessionId: string): LeaseRow | undefined;
  writeLease(sessionId: string, lease: Lease): void;
}

/** Takes or extends the session's lease inside a store change; null when another holds it. */
export function takeLease(
  rows: LeaseRows,
  sessionId: string,
  runtimeId: string,
  ttlMs: number,
  now: number,
): Lease | null {
  const current = rows.readLease(sessionId);
  if (current === undefined) throw new StoreError("session_not_found", `No session ${sessionId}.`);
  const lease = nextLease(current, runtimeId, ttlMs, now);
  if (lease !== null) rows.writeLease(sessionId, lease);
  return lease;
}

export const SELECT_LEASE =
  "SELECT lease_runtime_id, lease_epoch, lease_expires_at FROM sessions WHERE id = ?";

export const WRITE_LEASE =
  "UPDATE sessions SET lease_runtime_id = ?, lease_epoch = ?, lease_expires_at = ? WHERE id = ?";

/** Only while held with this epoch: a lost lease is never extended or given up by its old holder. */
export const RENEW_LEASE = `UPDATE sessions SET lease_expires_at = ?
  WHERE id = ? AND lease_runtime_id = ? AND lease_epoch = ?`;

/** Only the lease as given: one extended since (a newer acquire or renew) stays. */
export const RELEASE_LEASE = `UPDATE sessions SET lease_expires_at = 0
  WHERE id = ? AND lease_runtime_id = ? AND lease_epoch = ? AND lease_expires_at = ?`;

/** The sessions whose lease EXPIRE_LEASES_OF ends, read first in the same transaction. */
const LEASES_OF = `SELECT id FROM sessions
  WHERE lease_runtime_id = ? AND lease_expires_at > 0 ORDER BY id`;

/**
 * Every live lease of one (dead) holder. A plain UPDATE, not RETURNING: only `run` statements
 * are recorded in the group commit's journal.
 */
const EXPIRE_LEASES_OF = `UPDATE sessions SET lease_expires_at = 0
  WHERE lease_runtime_id = ? AND lease_expires_at > 0`;

/** Holders of live leases on sessions with work, for the liveness check at recovery. */
export const LIVE_LEASE_HOLDERS = `SELECT DISTINCT s.lease_runtime_id FROM sessions s
  WHERE s.status <> 'ended' AND s.lease_runtime_id IS NOT NULL AND s.lease_expires_at > ?
    AND EXISTS (SELECT 1 FROM turns t
                WHERE t.session_id = s.id AND t.status IN ('queued', 'running'))
  ORDER BY s.lease_runtime_id`;

/**
 * Ends every live lease of one (dead) holder, inside the caller's transaction; the sessions it
 * freed. `forget` drops what the write-behind keeps of each, so the next read sees the end.
 */
export function expireLeasesOf(
  statements: StatementCache,
  runtimeId: string,
  forget: (sessionId: string) => void,
): string[] {
  const ids = statements.get(LEASES_OF).pluck().all(runtimeId) as string[];
  if (ids.length > 0) statements.get(EXPIRE_LEASES_OF).run(runtimeId);
  for (const id of ids) forget(id);
  return ids;
}
