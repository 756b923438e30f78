// Lease rules (invariant 2). A lease is free when nobody holds it or it expired
// (expiresAt <= now); its holder may always extend it at the same epoch; any change of holder
// increments the epoch, the fencing token every write of the holder carries. Taking a lease is
// oc_write's (write-function.ts); renewing, releasing and ending them are these statements.
/** Only while held with this epoch: a lost lease is never extended by its old holder. */
export const RENEW_LEASE = `UPDATE sessions SET lease_expires_at = $4
  WHERE id = $1 AND lease_runtime_id = $2 AND lease_epoch = $3`;

/** Only the lease as given: one extended since (a newer acquire or renew) stays. */
export const RELEASE_LEASE = `UPDATE sessions SET lease_expires_at = 0
  WHERE id = $1 AND lease_runtime_id = $2 AND lease_epoch = $3 AND lease_expires_at = $4`;

/** Every live lease of one (dead) holder. */
export const EXPIRE_LEASES_OF = `UPDATE sessions SET lease_expires_at = 0
  WHERE lease_runtime_id = $1 AND lease_expires_at > 0 RETURNING id`;

/** Holders of live leases on sessions with work, for the liveness check at recovery. */
export const LIVE_LEASE_HOLDERS = `SELECT DISTINCT s.lease_runtime_id AS holder FROM sessions s
  WHERE s.status <> 'ended' AND s.lease_runtime_id IS NOT NULL AND s.lease_expires_at > $1
    AND EXISTS (SELECT 1 FROM turns t
                WHERE t.session_id = s.id AND t.status IN ('queued', 'running'))
  ORDER BY s.lease_runtime_id`;
