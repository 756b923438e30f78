// A call of an MCP tool, run by the runtime's MCP client: a durable tool call like any other.
// tool.started is already in the step's write; progress notifications become tool.progress;
// the turn's abort cancels the request (the SDK tells the server); the call has a time limit;
// and every failure, a server that is down included, fails the call with a code the model and
// the log see (tool.failed `code`), never the turn. After a crash the call runs again with the
// same toolCallId, as every started call does.

import { jsonByteLength } from "@opencomputer/agent/internal";
import type { McpCallOutcome } from "../ports/mcp.ts";
import type { ToolCallRecord } from "../ports/records.ts";
import type { EgressLease } from "./egress-for.ts";
import {
  asMcpFailure,
  dropSession,
  type McpToolTarget,
  mcpEgress,
  mcpSettings,
  sessionFor,
} from "./mcp-turn.ts";
import {
  commitFailure,
  commitSuccess,
  reportProgress,
  TOOL_OUTPUT_LIMIT_BYTES,
} from "./tool-call.ts";
import type { TurnScope } from "./turn-scope.ts";
import { checkSchema } from "./validators.ts";

export async function executeMcpCall(
  scope: TurnScope,
  call: ToolCallRecord,
  target: McpToolTarget,
) {
  const { server, tool } = target;
  if (typeof call.input === "string") {
    return commitFailure(
      scope,
      call,
      `The arguments for ${call.tool} are not a valid JSON object: ${call.input.slice(0, 200)}`,
    );
  }
  const invalid = schemaProblem(tool.inputSchema, call.input);
  if (invalid) return commitFailure(scope, call, `Invalid input for ${call.tool}: ${invalid}`);
  let lease: EgressLease | undefined;
  let outcome: McpCallOutcome;
  try {
    const settings = mcpSettings(scope);
    lease = await mcpEgress(scope, server);
    if (scope.signal.aborted) return;
    const session = await sessionFor(scope, server, lease);
    outcome = await session.callTool(tool.name, call.input as Record<string, unknown>, {
      signal: scope.signal,
      timeoutMs: settings.callTimeoutMs,
      ...(lease.egress ? { egress: lease.egress } : {}),
      onProgress: (metadata) => void reportProgress(scope, call, metadata),
    });
  } catch (error) {
    outcome = { ok: false, ...asMcpFailure(error, server) };
  } finally {
    await lease?.end();
  }
  // The turn was interrupted, ended or its runtime is closing: whoever aborted it settles the
  // call (settledBy), or, when the runtime closes, leaves it started for the next runtime to run
  // again. A cancellation is not the call's outcome.
  if (scope.signal.aborted) return;
  if (!outcome.ok) {
    // A server that went away leaves a client that cannot recover: the next call connects again.
    if (outcome.code === "mcp_server_unavailable" || outcome.code === "mcp_protocol_error") {
      dropSession(scope, server);
    }
    return commitFailure(scope, call, `${outcome.code}: ${outcome.message}`, outcome.code);
  }
  const bytes = jsonByteLength(outcome.output);
  if (bytes > TOOL_OUTPUT_LIMIT_BYTES) {
    const message = `MCP tool ${tool.name} of server "${server.id}" returned ${bytes} bytes of JSON; the limit is ${TOOL_OUTPUT_LIMIT_BYTES}`;
    return commitFailure(scope, call, `mcp_output_too_large: ${message}`, "mcp_output_too_large");
  }
  return commitSuccess(scope, call, outcome.output);
}

/** The schema's verdict; a schema the validator cannot compile is left to the server. */
function schemaProblem(schema: object, input: unknown): string | null {
  try {
    return checkSchema(schema, input, "input");
  } catch {
    return null;
  }
}
