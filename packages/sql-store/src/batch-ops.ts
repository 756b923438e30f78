// What every SQL store does the same way with a WriteBatch's ops before it turns them into
// statements (store-sqlite and store-postgres write-batch.ts).
import {
  type ResultRecord,
  type SessionPatch,
  StoreError,
  type TurnPatch,
  type WriteOp,
} from "@opencomputer/runtime";

/**
 * The patchable fields of a session and of a turn, as both SQL stores write them:
 * [key in the patch, column, stored as JSON]. Bit i of a patch mask is field i.
 */
export const SESSION_FIELDS = [
  ["status", "status", false],
  ["result", "result", true],
  ["question", "question", true],
  ["runtime", "runtime", true],
  ["labels", "labels", true],
] as const;

export const TURN_FIELDS = [
  ["status", "status", false],
  ["outcome", "outcome", false],
  ["error", "error", true],
  ["steps", "steps", false],
  ["startedAt", "started_at", false],
  ["settledAt", "settled_at", false],
  ["input", "input", true],
  ["mode", "mode", false],
] as const;

/**
 * The columns of a result row, in the order of `resultValues`: what an INSERT names (a
 * SELECT reads the same columns through row-mapping.ts's RESULT_COLUMNS, one string).
 */
export const RESULT_INSERT_COLUMNS = [
  "session_id",
  "result_id",
  "agent_id",
  "deployment_id",
  "turn_id",
  "message_id",
  "tool_call_id",
  "result_tool",
  "schema_digest",
  "data_digest",
  "data",
  "created_at",
] as const;

/** A result record's values in RESULT_INSERT_COLUMNS order; `json` stores the data as the store does. */
export function resultValues(r: ResultRecord, json: (value: unknown) => string): unknown[] {
  return [
    r.sessionId,
    r.resultId,
    r.agentId,
    r.deploymentId,
    r.turnId,
    r.messageId,
    r.toolCallId,
    r.resultTool,
    r.schemaDigest,
    r.dataDigest,
    json(r.data),
    r.createdAt,
  ];
}

/** `into` with the fields `patch` sets; an undefined field sets nothing, as in the UPDATEs. */
export function mergePatch<P extends SessionPatch | TurnPatch>(into: P, patch: P): P {
  const merged = { ...into } as Record<string, unknown>;
  const from = patch as Record<string, unknown>;
  for (const key in from) {
    const value = from[key];
    if (value !== undefined && Object.hasOwn(from, key)) merged[key] = value;
  }
  return merged as P;
}

/**
 * The turn.update at `ops[at]` merged with the updates of the same turn right after it (a last
 * step's count, then its settlement): one UPDATE, later fields winning as they would applied one
 * after the other. `last` is the index of the last op merged.
 */
export function turnUpdateRun(
  ops: readonly WriteOp[],
  at: number,
): { id: string; patch: TurnPatch; last: number } {
  const first = ops[at] as Extract<WriteOp, { type: "turn.update" }>;
  let patch = first.patch;
  let last = at;
  for (let next = ops[last + 1]; next?.type === "turn.update" && next.id === first.id; ) {
    patch = mergePatch(patch, next.patch);
    last++;
    next = ops[last + 1];
  }
  return { id: first.id, patch, last };
}

/** Refuses a record that names another session than the batch's (`invalid_batch`). */
export function ownedBy(recordSessionId: string, sessionId: string, what: string, id: string) {
  if (recordSessionId !== sessionId) {
    throw new StoreError(
      "invalid_batch",
      `The ${what} ${id} belongs to session ${recordSessionId}, not ${sessionId}.`,
    );
  }
}
