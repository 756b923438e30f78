// The ops loop of `oc_write` (write-function.ts): one statement per op, chosen by its kind `k`,
// its record taken apart by json_to_record. Every JSON-valued field arrives as the text of its
// value and is cast back with `::json`, which keeps it exactly (see write-function.ts). A mask's
// bit i is field i of sql-store's TURN_FIELDS or approvals.ts FIELDS: an update sets only those.

/** A turn's insert, and its update by mask (refused when the turn does not exist). */
const TURN_OPS = `    WHEN 'turn.insert' THEN
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
`;

/**
 * A message's insert, a tool call's upsert (the row kept in place, so its insertion order stays),
 * a result's insert.
 */
const ROW_OPS = `    WHEN 'message.insert' THEN
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
`;

/** An approval's insert, and its compare-and-set update. */
const APPROVAL_OPS = `    WHEN 'approval.insert' THEN
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
`;

/** The loop over `p_ops`, in order; an unknown kind is refused as `invalid_batch`. */
export const OPS_LOOP = `  FOR op IN SELECT value FROM json_array_elements(p_ops) LOOP
    CASE op->>'k'
${TURN_OPS}${ROW_OPS}${APPROVAL_OPS}    ELSE
      RAISE EXCEPTION USING ERRCODE = 'OC001', DETAIL = 'invalid_batch',
        MESSAGE = format('Unknown write op %s.', op->>'k');
    END CASE;
  END LOOP;

`;
