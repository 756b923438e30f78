// The parts of `oc_write` (write-function.ts) around its ops loop, in the order the function runs
// them: the signature and variables, the session row's lock and the lease claim, the guards,
// the events' append (with their side rows from migration 10), the session row's update, and
// the NOTIFY. Each is PL/pgSQL text; write-function.ts puts them together per migration.
import { DB_NOW_MS } from "./db-now.ts";
import { OUTBOX_ROWS_OF_WRITE } from "./delivery-store.ts";
import { USAGE_ROWS_OF_WRITE } from "./usage-store.ts";

/** The signature (21 parameters, three OUT columns) and the variables, up to BEGIN. */
export const SIGNATURE = `CREATE OR REPLACE FUNCTION oc_write(
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
BEGIN
`;

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

/** The fence, the expected turn and session status, and the expected open calls. */
export const GUARDS = `  IF p_fence_runtime IS NOT NULL
      AND (holder IS DISTINCT FROM p_fence_runtime OR epoch <> p_fence_epoch) THEN
    RAISE EXCEPTION USING ERRCODE = 'OC001', DETAIL = 'stale_epoch',
      MESSAGE = format('Session %s is leased to %s at epoch %s; the write was fenced with %s at epoch %s.',
        p_session, coalesce(holder, 'nobody'), epoch, p_fence_runtime, p_fence_epoch);
  END IF;
  IF p_turn_id IS NOT NULL THEN
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
  IF p_session_status IS NOT NULL AND NOT s.status = ANY (p_session_status) THEN
    RAISE EXCEPTION USING ERRCODE = 'OC001', DETAIL = 'session_state',
      MESSAGE = format('Session %s is %s, expected %s.', p_session, s.status,
        array_to_string(p_session_status, ' or '));
  END IF;
  IF p_calls_turn IS NOT NULL THEN
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

/** The session row, updated once: last seq, revision, the merged patch, the lease. */
export const SESSION_UPDATE = `  IF n > 0 OR p_session_mask >= 0 OR p_claim_runtime IS NOT NULL THEN
    UPDATE sessions x SET last_seq = base_seq + n,
        revision = CASE WHEN p_session_mask >= 0 THEN x.revision + 1 ELSE x.revision END,
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
        lease_epoch = CASE WHEN p_claim_runtime IS NULL THEN x.lease_epoch ELSE epoch END,
        lease_expires_at = CASE WHEN p_claim_runtime IS NULL THEN x.lease_expires_at
          ELSE p_claim_expires END
      FROM json_to_record(coalesce(p_session_row, '{}')) AS r(status text, result text,
        question text, runtime text, labels text, label_index text)
      WHERE x.id = p_session;
  END IF;
`;

/** The commit's NOTIFY; `followed`: events only while the session is followed (migration 9). */
export function notifyCommit(followed: boolean): string {
  return `  IF p_channel IS NOT NULL AND n > 0${followed ? " AND (p_work OR s.followed)" : ""} THEN
    PERFORM pg_notify(p_channel,
      CASE WHEN p_work THEN 'w ' ELSE 'e ' END || (base_seq + n) || ' ' || p_session);
  END IF;
END
$fn$;
`;
}
