import type { JsonSchema, JsonValue } from "@opencomputer/agent";

/** What a runtime-provided tool's `execute` gets for one call. */
export interface BuiltInToolContext {
  /** Already validated against the tool's `input` schema. */
  input: Record<string, unknown>;
  sessionId: string;
  turnId: string;
  toolCallId: string;
  agentId: string;
  signal: AbortSignal;
  reportProgress(metadata: JsonValue): Promise<void>;
}

export type BuiltInResult = { ok: true; output: JsonValue } | { ok: false; message: string };

/**
 * A tool the runtime provides (selected with `useTool("<id>")`), e.g. the computers' `shell`.
 * Unlike an author's tool it runs with the runtime's privileges, so it may hold resources per
 * session; `onSessionEnd` is where it lets them go.
 */
export interface BuiltInTool {
  id: string;
  description: string;
  input: JsonSchema;
  execute(context: BuiltInToolContext): Promise<BuiltInResult>;
  onSessionEnd?(sessionId: string): Promise<void>;
}
