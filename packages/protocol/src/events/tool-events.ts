import { integer, json, literal, object, oneOf, optional, string } from "../shape.ts";

const call = { tool: string(), callId: string(), title: string() };

/**
 * A tool call's life. `providerExecuted` marks tools the model provider ran itself (web search);
 * `attempt` counts runs of a call resumed after a crash; `settledBy` names why a call still open
 * at the end of its turn was settled for it.
 */
export const toolEvents = {
  "tool.started": object({
    ...call,
    input: json(),
    attempt: optional(integer()),
    providerExecuted: optional(literal(true)),
  }),
  "tool.progress": object({ ...call, metadata: json() }),
  "tool.completed": object({
    ...call,
    output: json(),
    result: optional(literal(true)),
    providerExecuted: optional(literal(true)),
  }),
  "tool.failed": object({
    ...call,
    message: string(),
    /** A stable code when the runtime knows why (e.g. `mcp_server_unavailable`). */
    code: optional(string()),
    settledBy: optional(oneOf(["interrupted", "session_ended", "turn_failed"])),
    providerExecuted: optional(literal(true)),
  }),
};
