import type { JsonValue } from "@opencomputer/agent";
import { jsonByteLength } from "@opencomputer/agent/internal";
import { isoNow } from "../clock.ts";
import { jsonDigest } from "../digest.ts";
import { newId } from "../ids.ts";
import type { ToolDescriptor } from "../ports/agent-execution.ts";
import type { ResultRecord, ToolCallRecord } from "../ports/records.ts";
import type { WriteBatch } from "../ports/store.ts";
import { StoreError } from "../ports/store-errors.ts";
import { write } from "./context.ts";
import { isFenceRefusal } from "./refusal.ts";
import { commitFailure } from "./tool-call.ts";
import { guard, type TurnScope } from "./turn-scope.ts";
import { checkSchema } from "./validators.ts";

/** The seed's limit on a session result: 8 KiB of JSON (UTF-8 bytes of its serialisation). */
export const RESULT_LIMIT_BYTES = 8 * 1024;
const COMMIT_ATTEMPTS = 4;

const schemaDigests = new WeakMap<object, string>();
export function schemaDigestOf(schema: object): string {
  let digest = schemaDigests.get(schema);
  if (!digest) {
    digest = jsonDigest(schema);
    schemaDigests.set(schema, digest);
  }
  return digest;
}

/**
 * Commits a result tool's value as the session result, atomically with the call's completion
 * and its `tool.completed {result: true}` event, before the model hears of it. A value that fails
 * the schema or the size limit fails the call and leaves the previous result standing. A commit
 * whose acknowledgement was lost is retried: the store's (session, toolCallId) uniqueness turns
 * the retry into a read of the same record.
 */
export async function commitResult(
  scope: TurnScope,
  call: ToolCallRecord,
  tool: ToolDescriptor,
  data: JsonValue,
) {
  const output = tool.output as object;
  const invalid = checkSchema(output, data, "$");
  if (invalid) {
    return commitFailure(
      scope,
      call,
      `${tool.name} returned a value that does not match its output schema: ${invalid}. The previous result stands.`,
    );
  }
  const bytes = jsonByteLength(data);
  if (bytes > RESULT_LIMIT_BYTES) {
    return commitFailure(
      scope,
      call,
      `${tool.name} returned ${bytes} bytes of JSON; a result may be at most ${RESULT_LIMIT_BYTES} bytes. The previous result stands.`,
    );
  }
  const record = resultRecord(scope, call, tool, data);
  const done: ToolCallRecord = {
    ...call,
    status: "completed",
    output: data,
    settledAt: record.createdAt,
  };
  for (let attempt = 1; ; attempt++) {
    try {
      await write(scope.ctx, scope.sessionId, resultBatch(scope, record, done));
      scope.conversation.setCall(done);
      return;
    } catch (error) {
      if (isFenceRefusal(error)) return;
      const existing = await scope.ctx.store
        .getResultByCall(scope.sessionId, call.callId)
        .catch(() => undefined);
      if (existing) {
        if (existing.dataDigest === record.dataDigest) {
          scope.conversation.setCall({ ...done, output: existing.data });
          return;
        }
        return commitFailure(
          scope,
          call,
          `Call ${call.callId} already committed a different result (${existing.resultId}); a tool call commits one value`,
        );
      }
      if (error instanceof StoreError || attempt >= COMMIT_ATTEMPTS) {
        scope.ctx.log.error("result commit failed", {
          sessionId: scope.sessionId,
          callId: call.callId,
          error: String(error),
        });
        return commitFailure(
          scope,
          call,
          `The result of ${tool.name} could not be committed; call it again`,
        );
      }
      await new Promise((r) => setTimeout(r, 10 * 2 ** attempt));
    }
  }
}

function resultRecord(
  scope: TurnScope,
  call: ToolCallRecord,
  tool: ToolDescriptor,
  data: JsonValue,
): ResultRecord {
  return {
    resultId: newId("res"),
    agentId: scope.agentId,
    deploymentId: scope.deploymentId,
    sessionId: scope.sessionId,
    turnId: scope.turn.id,
    messageId: call.messageId,
    toolCallId: call.callId,
    resultTool: tool.name,
    schemaDigest: schemaDigestOf(tool.output as object),
    dataDigest: jsonDigest(data),
    data,
    createdAt: isoNow(),
  };
}

/** The result, the session's pointer to it, the call's completion and its event: one write. */
function resultBatch(scope: TurnScope, record: ResultRecord, done: ToolCallRecord): WriteBatch {
  const { data, createdAt, resultTool } = record;
  return {
    ...guard(scope),
    ops: [
      { type: "result.insert", record },
      {
        type: "session.update",
        patch: {
          result: { turnId: scope.turn.id, callId: done.callId, reportedAt: createdAt, data },
        },
      },
      { type: "toolCall.upsert", call: done },
    ],
    events: [
      {
        type: "tool.completed",
        turnId: scope.turn.id,
        data: {
          tool: resultTool,
          callId: done.callId,
          title: resultTool,
          output: data,
          result: true,
        },
      },
    ],
  };
}
