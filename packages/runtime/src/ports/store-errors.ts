import { OpenComputerError } from "@opencomputer/agent";

/**
 * A write the store refused. Codes:
 * - `session_not_found`: no such session.
 * - `stale_epoch`: the batch's fence does not match the session's lease (another runtime took it).
 * - `turn_not_active`: `expectTurn` failed (the turn settled or never existed).
 * - `session_state`: `expectSession` failed.
 * - `calls_changed`: `expectOpenCalls` failed (a call settled meanwhile; read again and retry).
 * - `duplicate`: a unique key is taken (a turn's idempotency key, a result for the same call,
 *   an id already used).
 * - `approval_state`: an `approval.update` found the approval in another status (decided twice,
 *   applied twice) or missing.
 * - `invalid_batch`: a record that belongs to another session, or an unknown op.
 * - `schema_unsupported`: the store's schema is newer than this build knows.
 * - `invalid_value`: a value the store cannot keep exactly (e.g. a BigInt in event data).
 * - `journal_failed`, `journal_corrupt` (SQLite with group commit): the commit journal could not
 *   be written, or holds records that cannot be replayed; the message names the file.
 * Nothing of a refused batch is written.
 */
export class StoreError extends OpenComputerError {}
