// The parts of `oc_write` (write-function.ts) around its ops loop, in the order the function runs
// them: the signature and variables, the session row's lock and the lease claim, the guards,
// the events' append (with their side rows from migration 10), the session row's update, and
// the NOTIFY; and migration 12's parts, which lock, check and update the row in one UPDATE and
// fall back to the others. Each is PL/pgSQL text; write-function.ts puts them together per
// migration.
import { DB_NOW_MS } from "./db-now.ts";
import { OUTBOX_ROWS_OF_WRITE } from "./delivery-store.ts";
import { USAGE_ROWS_OF_WRITE } from "./usage-store.ts";

/**
 * The signature (21 parameters, three OUT columns) and the variables, up to BEGIN;
 * `moreVariables`: declarations a later version adds.
 */
export function signature(moreVariables = ""): string {
  return `CREATE OR REPLACE FUNCTION oc_write(
  p_session text,
  p_claim_runtime text, p_claim_expires bigint, p_now bigint,
  p_fence_runtime text, p_fence_epoch bigint,
  p_turn_id text, p_turn_status text[],
  p_session_status text[],
  p_calls_turn text, p_calls text[],
  p_ops json,
  p_session_mask integer, p_session_row json,
  p_ev_ids text[], p_ev_turns text[], p_ev_types text[], p_ev_data text[],
  p_timestamp text, p_channel text, p_work boolean,
  OUT base_seq bigint, OUT lease_epoch bigint, OUT claimed boolean)
LANGUAGE plpgsql AS $fn$
DECLARE
  s record;
  holder text;
  epoch bigint;
  st text;
  open_calls text[];
  op json;
  expected text[];
  mask integer;
  n integer := coalesce(cardinality(p_ev_ids), 0);
  -- -1 (untouched) sets no field.
  sm integer := greatest(p_session_mask, 0);
${moreVariables}BEGIN
`;
}

/**
 * Locks the session row (FOR UPDATE serialises every writer of the session), then takes or
 * extends the lease when the write claims it; a lease another live holder has ends the call
 * with `claimed` false. `followed`: also reads whether a reader follows the session (migration 9).
 */
export function lockAndClaim(followed: boolean): string {
  return `  SELECT x.status, x.last_seq, x.lease_runtime_id, coalesce(x.lease_epoch, 0) AS epoch,
      coalesce(x.lease_expires_at, 0) AS expires${
        followed
          ? `,
      x.followed_until > ${DB_NOW_MS} AS followed`
          : ""
      }
    INTO s FROM sessions x WHERE x.id = p_session FOR UPDATE;
  IF NOT FOUND THEN
    RAISE EXCEPTION USING ERRCODE = 'OC001', DETAIL = 'session_not_found',
      MESSAGE = format('No session %s.', p_session);
  END IF;
  base_seq := s.last_seq;
  holder := s.lease_runtime_id;
  epoch := s.epoch;
  claimed := true;
  IF p_claim_runtime IS NOT NULL THEN
    -- lease.ts nextLease: the holder extends at its epoch; a free or expired lease changes hands.
    IF holder IS DISTINCT FROM p_claim_runtime THEN
      IF holder IS NOT NULL AND s.expires > p_now THEN
        claimed := false;
        lease_epoch := epoch;
        RETURN;
      END IF;
      epoch := epoch + 1;
    END IF;
    holder := p_claim_runtime;
  END IF;
  lease_epoch := epoch;

`;
}

/** The fence: the lease (after this write's claim) must be the writer's, at its epoch. */
const FENCE_GUARD = `  IF p_fence_runtime IS NOT NULL
      AND (holder IS DISTINCT FROM p_fence_runtime OR epoch <> p_fence_epoch) THEN
    RAISE EXCEPTION USING ERRCODE = 'OC001', DETAIL = 'stale_epoch',
      MESSAGE = format('Session %s is leased to %s at epoch %s; the write was fenced with %s at epoch %s.',
        p_session, coalesce(holder, 'nobody'), epoch, p_fence_runtime, p_fence_epoch);
  END IF;
`;

/** The expected turn exists and is in one of the expected statuses. */
const TURN_GUARD = `  IF p_turn_id IS NOT NULL THEN
    SELECT t.status INTO st FROM turns t WHERE t.session_id = p_session AND t.id = p_turn_id;
    IF st IS NULL THEN
      RAISE EXCEPTION USING ERRCODE = 'OC001', DETAIL = 'turn_not_active',
        MESSAGE = format('Session %s has no turn %s.', p_session, p_turn_id);
    ELSIF NOT st = ANY (p_turn_status) THEN
      RAISE EXCEPTION USING ERRCODE = 'OC001', DETAIL = 'turn_not_active',
        MESSAGE = format('Turn %s is %s, expected %s.', p_turn_id, st,
          array_to_string(p_turn_status, ' or '));
    END IF;
  END IF;
`;

/** The session is in one of the expected statuses (as the lock read it). */
const SESSION_STATUS_GUARD = `  IF p_session_status IS NOT NULL AND NOT s.status = ANY (p_session_status) THEN
    RAISE EXCEPTION USING ERRCODE = 'OC001', DETAIL = 'session_state',
      MESSAGE = format('Session %s is %s, expected %s.', p_session, s.status,
        array_to_string(p_session_status, ' or '));
  END IF;
`;

/** The turn's open tool calls are exactly the expected ones. */
const CALLS_GUARD = `  IF p_calls_turn IS NOT NULL THEN
    open_calls := ARRAY(SELECT c.call_id FROM tool_calls c WHERE c.session_id = p_session
      AND c.turn_id = p_calls_turn AND c.status = 'started' ORDER BY c.rid);
    IF NOT (open_calls <@ p_calls AND p_calls <@ open_calls
        AND cardinality(open_calls) = (SELECT count(DISTINCT v) FROM unnest(p_calls) v)) THEN
      RAISE EXCEPTION USING ERRCODE = 'OC001', DETAIL = 'calls_changed',
        MESSAGE = format('Turn %s has open calls [%s], expected [%s].', p_calls_turn,
          array_to_string(open_calls, ', '), array_to_string(p_calls, ', '));
    END IF;
  END IF;
`;

/** Every guard, in the order they refuse: fence, turn, session status, open calls. */
export const GUARDS = `${FENCE_GUARD}${TURN_GUARD}${SESSION_STATUS_GUARD}${CALLS_GUARD}
`;

/**
 * The events with the next seqs; `sideRows`: their usage steps and outbox rows too (migration
 * 10).
 */
export function appendEvents(sideRows: boolean): string {
  return `  IF n > 0 THEN
    INSERT INTO events (session_id, seq, id, timestamp, turn_id, type, data)
      SELECT p_session, base_seq + e.ord, e.id, p_timestamp, e.turn_id, e.type, e.data::json
      FROM unnest(p_ev_ids, p_ev_turns, p_ev_types, p_ev_data)
        WITH ORDINALITY AS e(id, turn_id, type, data, ord);${
          sideRows
            ? `
    ${USAGE_ROWS_OF_WRITE}
    ${OUTBOX_ROWS_OF_WRITE}`
            : ""
        }
  END IF;
`;
}

/** The session row's patched fields and the lease holder, as every update of the row sets them. */
const PATCH_SET = `        revision = CASE WHEN p_session_mask >= 0 THEN x.revision + 1 ELSE x.revision END,
        updated_at = CASE WHEN p_session_mask >= 0 THEN p_timestamp ELSE x.updated_at END,
        status = CASE WHEN sm & 1 <> 0 THEN r.status ELSE x.status END,
        result = CASE WHEN sm & 2 <> 0 THEN r.result::json ELSE x.result END,
        question = CASE WHEN sm & 4 <> 0 THEN r.question::json ELSE x.question END,
        runtime = CASE WHEN sm & 8 <> 0 THEN r.runtime::json ELSE x.runtime END,
        labels = CASE WHEN sm & 16 <> 0 THEN r.labels::json ELSE x.labels END,
        label_index = CASE WHEN sm & 16 <> 0 THEN r.label_index::jsonb
          ELSE x.label_index END,
        lease_runtime_id = CASE WHEN p_claim_runtime IS NULL THEN x.lease_runtime_id
          ELSE p_claim_runtime END,
`;

/** The lease's expiry, and the patch's record the fields come from. */
const EXPIRY_FROM_PATCH = `        lease_expires_at = CASE WHEN p_claim_runtime IS NULL THEN x.lease_expires_at
          ELSE p_claim_expires END
      FROM json_to_record(coalesce(p_session_row, '{}')) AS r(status text, result text,
        question text, runtime text, labels text, label_index text)
`;

/** Whether the write changes the session row: events, a patch, or a lease claim. */
const CHANGES_ROW = "n > 0 OR p_session_mask >= 0 OR p_claim_runtime IS NOT NULL";

/** The session row, updated once: last seq, revision, the merged patch, the lease. */
export const SESSION_UPDATE = `  IF ${CHANGES_ROW} THEN
    UPDATE sessions x SET last_seq = base_seq + n,
${PATCH_SET}        lease_epoch = CASE WHEN p_claim_runtime IS NULL THEN x.lease_epoch ELSE epoch END,
${EXPIRY_FROM_PATCH}      WHERE x.id = p_session;
  END IF;
`;

/** The lease's epoch once this write's claim is taken (lease.ts nextLease), from the row. */
const EPOCH_AFTER_CLAIM = `CASE WHEN p_claim_runtime IS NULL
          OR x.lease_runtime_id IS NOT DISTINCT FROM p_claim_runtime
          THEN coalesce(x.lease_epoch, 0) ELSE coalesce(x.lease_epoch, 0) + 1 END`;

/**
 * Migration 12: a write that changes the session row locks, checks and updates it in one
 * UPDATE, where lockAndClaim, the fence and session-status guards and SESSION_UPDATE took two
 * statements (and a row lock of its own in the WAL). The row's checks are its WHERE: the claim
 * finds the lease free, expired or already the writer's; the fence matches the lease after the
 * claim; the status is an expected one. UPDATE re-reads them on the row's newest version once it
 * holds the lock, as the SELECT ... FOR UPDATE did. When no row passes (a refusal, a lease held
 * elsewhere, no such session, or a NULL the checks cannot judge), nothing was written and
 * `updated` stays false: the write takes the path before migration 12, which refuses it, or
 * returns `claimed` false, exactly as then.
 */
export const UPDATE_FIRST = `  claimed := true;
  IF ${CHANGES_ROW} THEN
    UPDATE sessions x SET last_seq = x.last_seq + n,
${PATCH_SET}        lease_epoch = CASE WHEN p_claim_runtime IS NULL THEN x.lease_epoch
          ELSE ${EPOCH_AFTER_CLAIM} END,
${EXPIRY_FROM_PATCH}      WHERE x.id = p_session
        AND (p_claim_runtime IS NULL OR x.lease_runtime_id IS NULL
          OR x.lease_runtime_id = p_claim_runtime OR coalesce(x.lease_expires_at, 0) <= p_now)
        AND (p_fence_runtime IS NULL
          OR (CASE WHEN p_claim_runtime IS NULL THEN x.lease_runtime_id ELSE p_claim_runtime END
              = p_fence_runtime
            AND ${EPOCH_AFTER_CLAIM} = p_fence_epoch))
        AND (p_session_status IS NULL OR x.status = ANY (p_session_status))
      RETURNING x.last_seq - n, coalesce(x.lease_epoch, 0), x.followed_until > ${DB_NOW_MS}
        INTO base_seq, lease_epoch, followed_now;
    updated := FOUND;
  END IF;
`;

/** What UPDATE_FIRST adds to the variables. */
export const UPDATE_FIRST_VARIABLES = `  updated boolean := false;
  followed_now boolean;
`;

/**
 * The guards around UPDATE_FIRST: without it (`updated` false), the lock, the claim and every
 * guard as before, in the same order; with it, the guards its WHERE could not make.
 */
export const GUARDS_AFTER_UPDATE_FIRST = `  IF NOT updated THEN
${lockAndClaim(true)}${FENCE_GUARD}    followed_now := s.followed;
  END IF;
${TURN_GUARD}  IF NOT updated THEN
${SESSION_STATUS_GUARD}  END IF;
${CALLS_GUARD}
`;

/** SESSION_UPDATE, for the writes UPDATE_FIRST did not update. */
export const SESSION_UPDATE_UNLESS_UPDATED = `  IF NOT updated THEN
${SESSION_UPDATE}  END IF;
`;

/**
 * The commit's NOTIFY; `followed`: events only while the session is followed (migration 9), as
 * `flag` holds it.
 */
export function notifyCommit(followed: boolean, flag = "s.followed"): string {
  return `  IF p_channel IS NOT NULL AND n > 0${followed ? ` AND (p_work OR ${flag})` : ""} THEN
    PERFORM pg_notify(p_channel,
      CASE WHEN p_work THEN 'w ' ELSE 'e ' END || (base_seq + n) || ' ' || p_session);
  END IF;
END
$fn$;
`;
}
