// Lease rules (invariant 2). A lease is free when nobody holds it or it expired
// (expiresAt <= now); its holder may always extend it at the same epoch; any change of holder
// increments the epoch, the fencing token every write of the holder carries. Taking a lease is
// oc_write's (write-function.ts); renewing, releasing and ending them are these statements.
/** Only while held with this epoch: a lost lease is never extended by its old holder. */
export const RENEW_LEASE = `UPDATE sessions SET lease_expires_at = $4
  WHERE id = $1 AND lease_runtime_id = $2 AND lease_epoch = $3`;

/**
 * Releases several leases in one statement (lease-release.ts batches them): each only as given,
 * so one extended since (a newer acquire or renew) stays. The rows are locked in id order, so two
 * batches (or a batch and a single-row writer) cannot deadlock. Arrays $1..$4: session ids,
 * runtime ids, epochs, expiries. Returns each released session with its last seq.
 */
export const RELEASED_LEASES = `WITH locked AS (
    SELECT s.id FROM sessions s
    JOIN unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[])
      AS g(id, runtime_id, epoch, expires) ON g.id = s.id
    -- Repeated as an index condition: the rows are found by key, whatever the table's size.
    WHERE s.id = ANY ($1::text[]) AND s.lease_runtime_id = g.runtime_id
      AND s.lease_epoch = g.epoch AND s.lease_expires_at = g.expires
    ORDER BY s.id FOR UPDATE OF s),
  released AS (
    UPDATE sessions s SET lease_expires_at = 0 FROM locked l WHERE s.id = l.id
    RETURNING s.id, s.last_seq)`;

export const RELEASE_LEASES = `${RELEASED_LEASES}
  SELECT count(*) FROM released`;

/** Every live lease of one (dead) holder. */
export const EXPIRE_LEASES_OF = `UPDATE sessions SET lease_expires_at = 0
  WHERE lease_runtime_id = $1 AND lease_expires_at > 0 RETURNING id`;

// The recovery pass's two reads, the only statements a runtime sends periodically. Both start
// from the sessions with queued or running turns (the partial index turns_active, as small as the
// work in flight) and look each one up by id, so their cost follows the work in flight, not the
// number of sessions: 10,000 idle sessions cost them nothing (bench/idle.ts).
const ACTIVE = `WITH active AS MATERIALIZED (
    SELECT DISTINCT t.session_id FROM turns t WHERE t.status IN ('queued', 'running'))`;

/** Holders of live leases on sessions with work, for the liveness check at recovery. */
export const LIVE_LEASE_HOLDERS = `${ACTIVE}
  SELECT DISTINCT s.lease_runtime_id AS holder FROM active a JOIN sessions s ON s.id = a.session_id
  WHERE s.status <> 'ended' AND s.lease_runtime_id IS NOT NULL AND s.lease_expires_at > $1
  ORDER BY s.lease_runtime_id`;

/** Sessions with queued or running turns and no live lease: a runtime died holding them. */
export const LIST_RECOVERABLE = `${ACTIVE}
  SELECT s.id FROM active a JOIN sessions s ON s.id = a.session_id
  WHERE s.status <> 'ended' AND (s.lease_runtime_id IS NULL OR s.lease_expires_at <= $1)
  ORDER BY s.created_at, s.id`;
