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
// reads what the session's previous writer committed.
//
// The ops come as one JSON array; each op's JSON-valued fields are JSON *strings* holding the
// value's text (encoded twice): PostgreSQL's JSON functions refuse `\u0000` inside a value they
// take apart, but a string holding `\\u0000` is just text, and `::json` keeps it exactly. Events
// come as parallel text arrays. A refusal is SQLSTATE OC001 with the store's code in DETAIL
// (pg-errors.ts turns it into a StoreError).

import { OUTBOX_ROWS_OF_WRITE } from "./delivery-store.ts";
import { USAGE_ROWS_OF_WRITE } from "./usage-store.ts";

/** The milliseconds since the epoch by the database's clock, which every follower shares. */
export const DB_NOW_MS = "(extract(epoch FROM clock_timestamp()) * 1000)::bigint";

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

interface WriteFunctionVersion {
  /** Notify events only while the session is followed (migration 9). */
  followed: boolean;
  /** Write the events' usage steps and outbox rows itself (migration 10). */
  sideRows: boolean;
}

/** `oc_write` as migration 4, 9 or 10 installs it. */
function writeFunction({ followed, sideRows }: WriteFunctionVersion): string {
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
BEGIN
  SELECT x.status, x.last_seq, x.lease_runtime_id, coalesce(x.lease_epoch, 0) AS epoch,
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

  IF p_fence_runtime IS NOT NULL
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

  FOR op IN SELECT value FROM json_array_elements(p_ops) LOOP
    CASE op->>'k'
    WHEN 'turn.insert' THEN
      INSERT INTO turns (session_id, id, input, mode, status, outcome, error, idempotency_key,
          steps, created_at, updated_at, started_at, settled_at)
        SELECT p_session, r.id, r.input::json, r.mode, r.status, r.outcome, r.error::json,
          r.idempotency_key, r.steps, r.created_at, r.updated_at, r.started_at, r.settled_at
        FROM json_to_record(op) AS r(id text, input text, mode text, status text, outcome text,
          error text, idempotency_key text, steps integer, created_at text, updated_at text,
          started_at text, settled_at text);
    WHEN 'turn.update' THEN
      mask := (op->>'mask')::integer;
      UPDATE turns t SET updated_at = p_timestamp,
          status = CASE WHEN mask & 1 <> 0 THEN r.status ELSE t.status END,
          outcome = CASE WHEN mask & 2 <> 0 THEN r.outcome ELSE t.outcome END,
          error = CASE WHEN mask & 4 <> 0 THEN r.error::json ELSE t.error END,
          steps = CASE WHEN mask & 8 <> 0 THEN r.steps ELSE t.steps END,
          started_at = CASE WHEN mask & 16 <> 0 THEN r.started_at ELSE t.started_at END,
          settled_at = CASE WHEN mask & 32 <> 0 THEN r.settled_at ELSE t.settled_at END,
          input = CASE WHEN mask & 64 <> 0 THEN r.input::json ELSE t.input END,
          mode = CASE WHEN mask & 128 <> 0 THEN r.mode ELSE t.mode END
        FROM json_to_record(op) AS r(id text, status text, outcome text, error text,
          steps integer, started_at text, settled_at text, input text, mode text)
        WHERE t.session_id = p_session AND t.id = r.id;
      IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'OC001', DETAIL = 'turn_not_active',
          MESSAGE = format('Session %s has no turn %s.', p_session, op->>'id');
      END IF;
    WHEN 'message.insert' THEN
      INSERT INTO messages (session_id, id, turn_id, role, content, created_at)
        SELECT p_session, r.id, r.turn_id, r.role, r.content::json, r.created_at
        FROM json_to_record(op) AS r(id text, turn_id text, role text, content text,
          created_at text);
    WHEN 'toolCall.upsert' THEN
      -- ON CONFLICT DO UPDATE keeps the row (and its rid, the insertion order) in place.
      INSERT INTO tool_calls AS c (session_id, call_id, turn_id, message_id, tool, input, status,
          output, error, attempts, started_at, settled_at)
        SELECT p_session, r.call_id, r.turn_id, r.message_id, r.tool, r.input::json, r.status,
          r.output::json, r.error, r.attempts, r.started_at, r.settled_at
        FROM json_to_record(op) AS r(call_id text, turn_id text, message_id text, tool text,
          input text, status text, output text, error text, attempts integer,
          started_at text, settled_at text)
        ON CONFLICT (session_id, call_id) DO UPDATE SET turn_id = EXCLUDED.turn_id,
          message_id = EXCLUDED.message_id, tool = EXCLUDED.tool, input = EXCLUDED.input,
          status = EXCLUDED.status, output = EXCLUDED.output, error = EXCLUDED.error,
          attempts = EXCLUDED.attempts, started_at = EXCLUDED.started_at,
          settled_at = EXCLUDED.settled_at;
    WHEN 'result.insert' THEN
      INSERT INTO results (session_id, result_id, agent_id, deployment_id, turn_id, message_id,
          tool_call_id, result_tool, schema_digest, data_digest, data, created_at)
        SELECT p_session, r.result_id, r.agent_id, r.deployment_id, r.turn_id, r.message_id,
          r.tool_call_id, r.result_tool, r.schema_digest, r.data_digest, r.data::json,
          r.created_at
        FROM json_to_record(op) AS r(result_id text, agent_id text, deployment_id text,
          turn_id text, message_id text, tool_call_id text, result_tool text,
          schema_digest text, data_digest text, data text, created_at text);
    WHEN 'approval.insert' THEN
      INSERT INTO approvals (id, session_id, turn_id, tool_call_id, agent_id, deployment_id, tool,
          input, card, digest, status, decision, outcome, error, attempts, claimed_by,
          claimed_at, created_at, updated_at)
        SELECT r.id, p_session, r.turn_id, r.tool_call_id, r.agent_id, r.deployment_id, r.tool,
          r.input::json, r.card::json, r.digest, r.status, r.decision::json, r.outcome::json,
          r.error, r.attempts, r.claimed_by, r.claimed_at, r.created_at, r.updated_at
        FROM json_to_record(op) AS r(id text, turn_id text, tool_call_id text, agent_id text,
          deployment_id text, tool text, input text, card text, digest text, status text,
          decision text, outcome text, error text, attempts integer, claimed_by text,
          claimed_at text, created_at text, updated_at text);
    WHEN 'approval.update' THEN
      -- Compare-and-set: refused unless the approval is in an expected status.
      expected := ARRAY(SELECT json_array_elements_text(op->'expect'));
      SELECT a.status INTO st FROM approvals a
        WHERE a.id = op->>'id' AND a.session_id = p_session FOR UPDATE;
      IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'OC001', DETAIL = 'approval_state',
          MESSAGE = format('Session %s has no approval %s.', p_session, op->>'id');
      ELSIF NOT st = ANY (expected) THEN
        RAISE EXCEPTION USING ERRCODE = 'OC001', DETAIL = 'approval_state',
          MESSAGE = format('Approval %s is %s, expected %s.', op->>'id', st,
            array_to_string(expected, ' or '));
      END IF;
      mask := (op->>'mask')::integer;
      UPDATE approvals a SET updated_at = p_timestamp,
          status = CASE WHEN mask & 1 <> 0 THEN r.status ELSE a.status END,
          decision = CASE WHEN mask & 2 <> 0 THEN r.decision::json ELSE a.decision END,
          outcome = CASE WHEN mask & 4 <> 0 THEN r.outcome::json ELSE a.outcome END,
          error = CASE WHEN mask & 8 <> 0 THEN r.error ELSE a.error END,
          attempts = CASE WHEN mask & 16 <> 0 THEN r.attempts ELSE a.attempts END,
          claimed_by = CASE WHEN mask & 32 <> 0 THEN r.claimed_by ELSE a.claimed_by END,
          claimed_at = CASE WHEN mask & 64 <> 0 THEN r.claimed_at ELSE a.claimed_at END
        FROM json_to_record(op) AS r(id text, status text, decision text, outcome text,
          error text, attempts integer, claimed_by text, claimed_at text)
        WHERE a.id = r.id;
    ELSE
      RAISE EXCEPTION USING ERRCODE = 'OC001', DETAIL = 'invalid_batch',
        MESSAGE = format('Unknown write op %s.', op->>'k');
    END CASE;
  END LOOP;

  IF n > 0 THEN
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
  IF n > 0 OR p_session_mask >= 0 OR p_claim_runtime IS NOT NULL THEN
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
  IF p_channel IS NOT NULL AND n > 0${followed ? " AND (p_work OR s.followed)" : ""} THEN
    PERFORM pg_notify(p_channel,
      CASE WHEN p_work THEN 'w ' ELSE 'e ' END || (base_seq + n) || ' ' || p_session);
  END IF;
END
$fn$;
`;
}
