// Types an agent author sees. Kept free of runtime code so both the runtime and user code
// can import them without side effects.

import type {
  AgentInput,
  Answer,
  InputSource,
  JsonObject,
  JsonValue,
} from "@opencomputer/protocol";
import type { MemoryProjection } from "./use-memory.ts";

// JSON and the input shapes are the protocol's (one definition for the runtime, the API and
// agent code); authors import them from here.
export type { AgentInput, Answer, InputSource, JsonObject, JsonValue };

/** A JSON Schema object (draft-07 or 2020-12). */
export type JsonSchema = { readonly [key: string]: unknown };

export interface ToolRunContext {
  input: Record<string, unknown>;
  sessionId: string;
  messageId: string;
  toolCallId: string;
  agentId: string;
  signal?: AbortSignal;
  reportProgress(metadata: unknown): Promise<void>;
}

export interface PreviewContext {
  input: Record<string, unknown>;
  signal?: AbortSignal;
}

export interface ApprovalFact {
  label: string;
  value: string;
}

/** The card a person sees before approving a write. */
export interface ApprovalCard {
  title: string;
  summary?: string;
  facts?: ApprovalFact[];
}

export interface Decision {
  id: string;
  decidedAt: string;
  decidedBy?: string;
}

export interface ApplyContext {
  input: Record<string, unknown>;
  decision: Decision;
  signal?: AbortSignal;
}

interface ToolDefinitionBase {
  name: string;
  description: string;
  input?: JsonSchema;
  output?: JsonSchema;
  result?: boolean;
}

export interface RunToolDefinition extends ToolDefinitionBase {
  run(context: ToolRunContext): unknown;
  preview?: undefined;
  apply?: undefined;
}

export interface ApprovalToolDefinition extends ToolDefinitionBase {
  run?: undefined;
  preview(context: PreviewContext): ApprovalCard | Promise<ApprovalCard>;
  apply(context: ApplyContext): unknown;
}

export type ToolDefinition = RunToolDefinition | ApprovalToolDefinition;

export type ToolKind = "run" | "approval";

/** A tool that does its work in `run`. `result` is always present, normalised to a boolean. */
export type RunTool = Readonly<RunToolDefinition> & {
  readonly kind: "run";
  readonly result: boolean;
};

/** A tool that proposes with `preview` and writes with `apply` once a person approves. */
export type ApprovalTool = Readonly<ApprovalToolDefinition> & {
  readonly kind: "approval";
  readonly result: boolean;
};

/** The frozen object `defineTool` returns; `kind` tells the two shapes apart. */
export type Tool = RunTool | ApprovalTool;

export type ModelSelection = string | { provider: string; model: string };

/** What the runtime gives `renderAgent` for one render. */
export interface RenderContext {
  input: AgentInput;
  /** Built-in tool ids the runtime offers (e.g. "ask", "shell"); others are refused. */
  builtInToolIds?: readonly string[];
  /** What the runtime recalled for each memory resource the session binds, by resource id. */
  memory?: Readonly<Record<string, MemoryProjection>>;
  /** The session's data, which `useSessionData(key)` reads. */
  sessionData?: JsonObject;
}

/** One render's outcome: what the next model step may use. */
export interface RenderResult {
  /** Normalised `provider/model` id, or undefined when the agent chose none. */
  model: string | undefined;
  tools: Tool[];
  builtInTools: string[];
  /** Memory resources `useMemory` selected, in order of first use. */
  memory: string[];
  /** MCP servers attached with useMcpServer, in order of first selection. */
  mcpServers: McpServerSelection[];
  /** Agent ids selected with `useSubagent`, each offered as the tool `subagent_<id>`. */
  subagents: string[];
  /** Connection ids selected with `useConnection`. */
  connections: string[];
  instructions: string;
}

/**
 * One server a render attached: its id, and the URL and connection id when the agent passed a
 * definition (a bare id carries neither; the deployment's declaration supplies them).
 */
export interface McpServerSelection {
  id: string;
  url?: string;
  connection?: string;
}

export type AgentFunction = () => string;
