// The session row with its queued and running turns, in one statement: taking a new input needs
// both, and two statements would be two round trips (pipelined, still two transactions for the
// backend) and two snapshots. The turns come as one json array (json_agg keeps each json column
// as its JSON value and each int as a number, so turnFromRow reads them as it reads a row).
import { SESSION_COLUMNS, TURN_COLUMNS } from "./rows.ts";

/** $1: the session id. No row when the session does not exist; `active` is [] with no turns. */
export const SESSION_WITH_ACTIVE_TURNS = `SELECT ${SESSION_COLUMNS},
  (SELECT coalesce(json_agg(t ORDER BY t.rid), '[]'::json)
     FROM (SELECT ${TURN_COLUMNS}, rid FROM turns
           WHERE session_id = $1 AND status IN ('queued', 'running')) t) AS active
  FROM sessions WHERE id = $1`;
