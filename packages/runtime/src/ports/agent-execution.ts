// The port for "executing agent code": everything the engine asks of an author's code (render,
// a tool's run / preview / apply) goes through an AgentHandle, so that code can run in this
// process (embedding, tests) or in a separate worker process that holds no secret.

import {
  type AgentInput,
  type Decision,
  type JsonObject,
  type JsonSchema,
  type JsonValue,
  type McpServerSelection,
  type MemoryProjection,
  OpenComputerError,
  type ToolKind,
} from "@opencomputer/agent";

/** Where `connection.fetch` sends requests for one call, and the per-session token it shows. */
export interface Egress {
  gatewayUrl: string;
  token: string;
}

/** What a tool declares, without its code: enough to offer it to the model and check calls. */
export interface ToolDescriptor {
  name: string;
  description: string;
  input?: JsonSchema;
  output?: JsonSchema;
  /** The session's result tool (validated against `output` and committed as a result). */
  result: boolean;
  /** `run` tools do their work in run; `approval` tools have preview and apply. */
  kind: ToolKind;
}

/** What a render gives the input of `renderAgent`. */
export interface RenderRequest {
  input: AgentInput;
  builtInToolIds: readonly string[];
  /** The memory recalled for this render, by resource id (absent when the session binds none). */
  memory?: Readonly<Record<string, MemoryProjection>>;
  /** The session's data (`useSessionData`); fixed for the session's life. */
  sessionData?: JsonObject;
}

/** One render's outcome. Keep the object: tool calls name the render their tool came from. */
export interface RenderedAgent {
  /** Identifies the render to the executor, so a call runs the very tool object it selected. */
  renderId: string;
  /** The request it was rendered from: an executor that lost the render renders it again. */
  request: RenderRequest;
  instructions: string;
  model: string | undefined;
  tools: ToolDescriptor[];
  builtInTools: string[];
  /** Memory resources the render selected with `useMemory`. */
  memory: string[];
  /** MCP servers the render attached (absent from renders of older workers). */
  mcpServers?: McpServerSelection[];
  /** Agents selected with `useSubagent` (absent from an older worker's render). */
  subagents?: string[];
  /** Connections selected with `useConnection`. */
  connections?: string[];
}

/**
 * Settled outcome of agent code: the value is JSON (checked where the code ran). `warning` says
 * the code returned normally but its value had to be replaced by a JSON description (an apply
 * that returned a `Response` has still applied).
 */
export type CodeOutcome =
  | { ok: true; value: JsonValue; warning?: string }
  | { ok: false; message: string };

export interface RunToolRequest {
  input: Record<string, unknown>;
  sessionId: string;
  messageId: string;
  toolCallId: string;
  agentId: string;
  signal: AbortSignal;
  /** Resolves when the progress is recorded; metadata is already checked to be JSON. */
  reportProgress(metadata: JsonValue): Promise<void>;
  egress?: Egress;
}

export interface PreviewRequest {
  input: Record<string, unknown>;
  signal: AbortSignal;
  egress?: Egress;
}

export interface ApplyRequest {
  input: Record<string, unknown>;
  decision: Decision;
  signal: AbortSignal;
  egress?: Egress;
}

/** Agent code of one deployment, ready to run (in this process or in a worker). */
export interface AgentHandle {
  agentId: string;
  deploymentId: string;
  /** The user's project directory (scripts, `.env.local`). */
  projectDir: string;
  /**
   * Renders the agent. Throws a RenderError for a platform rule the agent broke, another error
   * for the author's own exception, WorkerLostError when the process running it died.
   */
  render(request: RenderRequest): Promise<RenderedAgent>;
  /** Runs a run tool; a throw of the tool, bad progress or a non-JSON output is `ok: false`. */
  runTool(render: RenderedAgent, tool: string, request: RunToolRequest): Promise<CodeOutcome>;
  /** The card (JSON-checked, not yet shape-checked); a throw is `ok: false`. */
  previewTool(render: RenderedAgent, tool: string, request: PreviewRequest): Promise<CodeOutcome>;
  /** An approved write; a throw or a non-JSON outcome is `ok: false`. */
  applyTool(render: RenderedAgent, tool: string, request: ApplyRequest): Promise<CodeOutcome>;
}

export type ExecutionMode = "default" | "microvm";

/** Opens handles. One per runtime; `close` stops whatever processes it started. */
export interface AgentExecution {
  readonly kind: "in-process" | "worker";
  open(agentId: string, deploymentId: string, mode: ExecutionMode): Promise<AgentHandle>;
  close(): Promise<void>;
}

/**
 * The process running agent code died (crashed, was killed, or was stopped for missing its
 * heartbeat or a call deadline). The engine treats the turn as a crashed runtime's: it is
 * resumed, and calls that had started run again with the same toolCallId.
 */
export class WorkerLostError extends OpenComputerError {
  constructor(message: string, details: Record<string, unknown> = {}) {
    super("runtime_lost", message, details);
  }
}
