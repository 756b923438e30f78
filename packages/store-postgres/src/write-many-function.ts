// `oc_write_many` (migration 13): the writes of several sessions asked for in the same tick, as
// one call and set-based statements: one UPDATE for all their session rows, one INSERT of all
// their events, one statement per kind of op. `oc_write` runs about eight statements per write,
// and most of a statement's cost in PL/pgSQL is fixed (its executor's start and end, the plan's
// checks, the call); here a group pays it once (docs/performance.md has the figures).
//
// The writes come as parallel arrays, one element per write (statuses joined by commas, which no
// status contains), except the ops, the events and the expected open calls, which come flattened
// with the index (from 1) of the write each belongs to; each op is the JSON text of its record,
// as `oc_write` reads it, and its kind comes alongside. write-many.ts only sends writes of
// distinct sessions that change the session row, with no approval op and no two ops on one row,
// so no statement here has to see another's rows of the same write.
//
// The function never refuses one write on its own. When any write would have been refused, or
// its claim lost to another holder, or its session is missing, it raises OC002 and the whole call
// rolls back: write-many.ts then sends each write alone through `oc_write`, which gives it the
// outcome and error it has always had.

import { DELIVERED_TYPES, DELIVERED_TYPES_SQL, USAGE_COLUMNS } from "@opencomputer/sql-store";
import { DB_NOW_MS } from "./db-now.ts";

const FALLBACK = (why: string) => `RAISE EXCEPTION USING ERRCODE = 'OC002', MESSAGE = '${why}';`;

/** Each write's session row: locked, checked and updated in one UPDATE (as migration 12). */
const SESSIONS = `  WITH u AS (
    UPDATE sessions x SET last_seq = x.last_seq + v.n,
        revision = CASE WHEN v.mask >= 0 THEN x.revision + 1 ELSE x.revision END,
        updated_at = CASE WHEN v.mask >= 0 THEN v.ts ELSE x.updated_at END,
        status = CASE WHEN greatest(v.mask, 0) & 1 <> 0 THEN r.status ELSE x.status END,
        result = CASE WHEN greatest(v.mask, 0) & 2 <> 0 THEN r.result::json ELSE x.result END,
        question = CASE WHEN greatest(v.mask, 0) & 4 <> 0 THEN r.question::json
          ELSE x.question END,
        runtime = CASE WHEN greatest(v.mask, 0) & 8 <> 0 THEN r.runtime::json
          ELSE x.runtime END,
        labels = CASE WHEN greatest(v.mask, 0) & 16 <> 0 THEN r.labels::json ELSE x.labels END,
        label_index = CASE WHEN greatest(v.mask, 0) & 16 <> 0 THEN r.label_index::jsonb
          ELSE x.label_index END,
        lease_runtime_id = coalesce(v.claim, x.lease_runtime_id),
        lease_epoch = CASE WHEN v.claim IS NULL THEN x.lease_epoch
          WHEN x.lease_runtime_id IS NOT DISTINCT FROM v.claim THEN coalesce(x.lease_epoch, 0)
          ELSE coalesce(x.lease_epoch, 0) + 1 END,
        lease_expires_at = CASE WHEN v.claim IS NULL THEN x.lease_expires_at ELSE v.expires END
      FROM unnest(p_sessions, p_ev_count, p_session_mask, p_session_row, p_claim_runtime,
          p_claim_expires, p_now, p_fence_runtime, p_fence_epoch, p_session_status, p_timestamp)
          WITH ORDINALITY AS v(id, n, mask, patch, claim, expires, now, fence, fence_epoch,
            statuses, ts, i)
        CROSS JOIN LATERAL json_to_record(coalesce(v.patch::json, '{}')) AS r(status text,
          result text, question text, runtime text, labels text, label_index text)
      WHERE x.id = v.id
        AND (v.claim IS NULL OR x.lease_runtime_id IS NULL OR x.lease_runtime_id = v.claim
          OR coalesce(x.lease_expires_at, 0) <= v.now)
        AND (v.fence IS NULL OR (coalesce(v.claim, x.lease_runtime_id) = v.fence
          AND CASE WHEN v.claim IS NULL OR x.lease_runtime_id IS NOT DISTINCT FROM v.claim
            THEN coalesce(x.lease_epoch, 0) ELSE coalesce(x.lease_epoch, 0) + 1 END
            = v.fence_epoch))
        AND (v.statuses IS NULL OR x.status = ANY (string_to_array(v.statuses, ',')))
      RETURNING v.i, x.last_seq - v.n AS base, coalesce(x.lease_epoch, 0) AS epoch,
        x.followed_until > ${DB_NOW_MS} AS followed
  )
  SELECT count(*)::integer, array_agg(u.base ORDER BY u.i), array_agg(u.epoch ORDER BY u.i),
      array_agg(u.followed ORDER BY u.i)
    INTO updated, base_seqs, lease_epochs, followed FROM u;
  IF updated <> w THEN
    ${FALLBACK("A write of the group was refused or lost its claim.")}
  END IF;
`;

/** The turn and open-call guards of every write that has them. */
const GUARDS = `  IF array_remove(p_turn_id, NULL) <> '{}' AND EXISTS (
      SELECT 1 FROM unnest(p_sessions, p_turn_id, p_turn_status) AS v(id, turn, statuses)
      WHERE v.turn IS NOT NULL AND NOT EXISTS (SELECT 1 FROM turns t
        WHERE t.session_id = v.id AND t.id = v.turn
          AND t.status = ANY (string_to_array(v.statuses, ',')))) THEN
    ${FALLBACK("A turn of the group is not in an expected status.")}
  END IF;
  IF array_remove(p_calls_turn, NULL) <> '{}' AND EXISTS (
      SELECT 1 FROM unnest(p_sessions, p_calls_turn) WITH ORDINALITY AS v(id, turn, i)
      WHERE v.turn IS NOT NULL
        AND ARRAY(SELECT c.call_id FROM tool_calls c WHERE c.session_id = v.id
            AND c.turn_id = v.turn AND c.status = 'started' ORDER BY c.call_id COLLATE "C")
          IS DISTINCT FROM ARRAY(SELECT DISTINCT e.id COLLATE "C" FROM unnest(p_calls, p_calls_of)
            AS e(id, w) WHERE e.w = v.i ORDER BY 1)) THEN
    ${FALLBACK("A turn of the group has other open calls.")}
  END IF;
`;

/** Only the kinds of op with a statement below (write-many.ts sends no other). */
const KNOWN_KINDS = `  IF NOT p_op_kinds <@ ARRAY['turn.insert', 'turn.update', 'message.insert',
      'toolCall.upsert', 'result.insert'] THEN
    ${FALLBACK("An op of the group has no set-based statement.")}
  END IF;
`;

/** The ops as rows: `o` (op, write index, kind, order), its record `r` with `columns`. */
const opRows = (kind: string, columns: string) => `FROM unnest(p_ops, p_op_of, p_op_kinds)
          WITH ORDINALITY AS o(op, i, k, ord)
        CROSS JOIN LATERAL json_to_record(o.op::json) AS r(${columns})
      WHERE o.k = '${kind}'`;

const TURN_INSERT = `  IF 'turn.insert' = ANY (p_op_kinds) THEN
    INSERT INTO turns (session_id, id, input, mode, status, outcome, error, idempotency_key,
        steps, created_at, updated_at, started_at, settled_at)
      SELECT p_sessions[o.i], r.id, r.input::json, r.mode, r.status, r.outcome, r.error::json,
        r.idempotency_key, r.steps, r.created_at, r.updated_at, r.started_at, r.settled_at
      ${opRows(
        "turn.insert",
        `id text, input text, mode text, status text, outcome text,
          error text, idempotency_key text, steps integer, created_at text, updated_at text,
          started_at text, settled_at text`,
      )}
      ORDER BY o.ord;
  END IF;
`;

const TURN_UPDATE = `  IF 'turn.update' = ANY (p_op_kinds) THEN
    UPDATE turns t SET updated_at = p_timestamp[o.i],
        status = CASE WHEN r.mask & 1 <> 0 THEN r.status ELSE t.status END,
        outcome = CASE WHEN r.mask & 2 <> 0 THEN r.outcome ELSE t.outcome END,
        error = CASE WHEN r.mask & 4 <> 0 THEN r.error::json ELSE t.error END,
        steps = CASE WHEN r.mask & 8 <> 0 THEN r.steps ELSE t.steps END,
        started_at = CASE WHEN r.mask & 16 <> 0 THEN r.started_at ELSE t.started_at END,
        settled_at = CASE WHEN r.mask & 32 <> 0 THEN r.settled_at ELSE t.settled_at END,
        input = CASE WHEN r.mask & 64 <> 0 THEN r.input::json ELSE t.input END,
        mode = CASE WHEN r.mask & 128 <> 0 THEN r.mode ELSE t.mode END
      ${opRows(
        "turn.update",
        `id text, mask integer, status text, outcome text, error text,
          steps integer, started_at text, settled_at text, input text, mode text`,
      )}
        AND t.session_id = p_sessions[o.i] AND t.id = r.id;
    GET DIAGNOSTICS changed = ROW_COUNT;
    IF changed <> cardinality(array_positions(p_op_kinds, 'turn.update')) THEN
      ${FALLBACK("A turn the group updates does not exist.")}
    END IF;
  END IF;
`;

const ROW_INSERTS = `  IF 'message.insert' = ANY (p_op_kinds) THEN
    INSERT INTO messages (session_id, id, turn_id, role, content, created_at)
      SELECT p_sessions[o.i], r.id, r.turn_id, r.role, r.content::json, r.created_at
      ${opRows("message.insert", "id text, turn_id text, role text, content text, created_at text")}
      ORDER BY o.ord;
  END IF;
  IF 'toolCall.upsert' = ANY (p_op_kinds) THEN
    INSERT INTO tool_calls AS c (session_id, call_id, turn_id, message_id, tool, input, status,
        output, error, attempts, started_at, settled_at)
      SELECT p_sessions[o.i], r.call_id, r.turn_id, r.message_id, r.tool, r.input::json,
        r.status, r.output::json, r.error, r.attempts, r.started_at, r.settled_at
      ${opRows(
        "toolCall.upsert",
        `call_id text, turn_id text, message_id text, tool text, input text,
          status text, output text, error text, attempts integer, started_at text,
          settled_at text`,
      )}
      ORDER BY o.ord
      ON CONFLICT (session_id, call_id) DO UPDATE SET turn_id = EXCLUDED.turn_id,
        message_id = EXCLUDED.message_id, tool = EXCLUDED.tool, input = EXCLUDED.input,
        status = EXCLUDED.status, output = EXCLUDED.output, error = EXCLUDED.error,
        attempts = EXCLUDED.attempts, started_at = EXCLUDED.started_at,
        settled_at = EXCLUDED.settled_at;
  END IF;
  IF 'result.insert' = ANY (p_op_kinds) THEN
    INSERT INTO results (session_id, result_id, agent_id, deployment_id, turn_id, message_id,
        tool_call_id, result_tool, schema_digest, data_digest, data, created_at)
      SELECT p_sessions[o.i], r.result_id, r.agent_id, r.deployment_id, r.turn_id, r.message_id,
        r.tool_call_id, r.result_tool, r.schema_digest, r.data_digest, r.data::json, r.created_at
      ${opRows(
        "result.insert",
        `result_id text, agent_id text, deployment_id text, turn_id text,
          message_id text, tool_call_id text, result_tool text, schema_digest text,
          data_digest text, data text, created_at text`,
      )}
      ORDER BY o.ord;
  END IF;
`;

/** The events of every write with their seqs, and their usage steps and outbox rows. */
const EVENTS = `  IF cardinality(p_ev_ids) > 0 THEN
    INSERT INTO events (session_id, seq, id, timestamp, turn_id, type, data)
      SELECT p_sessions[e.w], base_seqs[e.w] + e.ord, e.id, p_timestamp[e.w], e.turn_id, e.type,
        e.data::json
      FROM unnest(p_ev_of, p_ev_ord, p_ev_ids, p_ev_turns, p_ev_types, p_ev_data)
        AS e(w, ord, id, turn_id, type, data);
    IF 'usage.recorded' = ANY (p_ev_types) THEN
      INSERT INTO usage_steps (${USAGE_COLUMNS})
        SELECT p_sessions[e.w], base_seqs[e.w] + e.ord, e.turn_id, p_timestamp[e.w], u.provider,
          u.model, coalesce(u."inputTokens", 0), coalesce(u."outputTokens", 0),
          coalesce(u."cacheReadTokens", 0), coalesce(u."cacheWriteTokens", 0), u."costUsd"
        FROM unnest(p_ev_of, p_ev_ord, p_ev_turns, p_ev_types, p_ev_data)
            AS e(w, ord, turn_id, type, data)
          CROSS JOIN LATERAL json_to_record(e.data::json) AS u(provider text, model text,
            "inputTokens" bigint, "outputTokens" bigint, "cacheReadTokens" bigint,
            "cacheWriteTokens" bigint, "costUsd" double precision)
        WHERE e.type = 'usage.recorded';
    END IF;
    IF p_ev_types && ARRAY[${DELIVERED_TYPES.map((t) => `'${t}'`).join(", ")}]
        AND EXISTS (SELECT 1 FROM event_subscriptions) THEN
      INSERT INTO event_outbox (event_id, session_id, seq, type, turn_id, occurred_at, data)
        SELECT e.id, p_sessions[e.w], base_seqs[e.w] + e.ord, e.type, e.turn_id,
          p_timestamp[e.w], e.data::json
        FROM unnest(p_ev_of, p_ev_ord, p_ev_ids, p_ev_turns, p_ev_types, p_ev_data)
          AS e(w, ord, id, turn_id, type, data)
        WHERE e.type IN ${DELIVERED_TYPES_SQL};
    END IF;
  END IF;
`;

/** Each write's NOTIFY, as `oc_write` sends it (migration 9). */
const NOTIFY = `  FOR j IN 1..w LOOP
    IF p_channel[j] IS NOT NULL AND p_ev_count[j] > 0 AND (p_work[j] OR followed[j]) THEN
      PERFORM pg_notify(p_channel[j], CASE WHEN p_work[j] THEN 'w ' ELSE 'e ' END
        || (base_seqs[j] + p_ev_count[j]) || ' ' || p_sessions[j]);
    END IF;
  END LOOP;
`;

export const WRITE_MANY_V13 = `CREATE FUNCTION oc_write_many(
  p_sessions text[], p_claim_runtime text[], p_claim_expires bigint[], p_now bigint[],
  p_fence_runtime text[], p_fence_epoch bigint[],
  p_turn_id text[], p_turn_status text[], p_session_status text[],
  p_calls_turn text[], p_calls text[], p_calls_of integer[],
  p_ops text[], p_op_of integer[], p_op_kinds text[],
  p_session_mask integer[], p_session_row text[],
  p_ev_count integer[], p_ev_of integer[], p_ev_ord integer[],
  p_ev_ids text[], p_ev_turns text[], p_ev_types text[], p_ev_data text[],
  p_timestamp text[], p_channel text[], p_work boolean[],
  OUT base_seqs bigint[], OUT lease_epochs bigint[])
LANGUAGE plpgsql
-- Each statement's plan is made once per connection and kept; made while a table is small, a
-- plan that scans it whole or hashes it would stay as the table grows. The writes' rows are
-- found by their keys: by index, one by one, whatever the tables' statistics said then.
SET enable_seqscan = off SET enable_hashjoin = off SET enable_mergejoin = off
AS $fn$
DECLARE
  w integer := cardinality(p_sessions);
  updated integer;
  changed integer;
  followed boolean[];
BEGIN
${SESSIONS}${GUARDS}${KNOWN_KINDS}${TURN_INSERT}${TURN_UPDATE}${ROW_INSERTS}${EVENTS}${NOTIFY}END
$fn$;
`;
