// Runs one loaded agent function and its tools, wherever that happens: the in-process
// executor and the worker process both use this, so an outcome (and every message a model or
// an author sees) is the same in both modes. Outputs are checked for JSON here, where the
// value still exists: a worker could not send a Date or a function across anyway.

import type { AgentFunction, JsonValue, Tool } from "@opencomputer/agent";
import { assertJsonCompatible, renderAgent } from "@opencomputer/agent/internal";
import { newId } from "../ids.ts";
import type {
  ApplyRequest,
  CodeOutcome,
  Egress,
  PreviewRequest,
  RenderedAgent,
  RenderRequest,
  RunToolRequest,
  ToolDescriptor,
} from "../ports/agent-execution.ts";
import { applyOutcome } from "./apply-outcome.ts";
import { withEgress } from "./egress.ts";

/** Renders a worker keeps for their tool objects; a call whose render is gone renders again. */
export const WORKER_KEPT_RENDERS = 512;

export type RenderRef = Pick<RenderedAgent, "renderId" | "request">;

export class AgentCode {
  private readonly renders = new Map<string, Map<string, Tool>>();
  // In this process the engine hands back the very render object: no cache to bound.
  private readonly byObject = new WeakMap<object, Map<string, Tool>>();

  /** `keptRenders`: how many renders a worker keeps by id (its caller's objects are copies). */
  constructor(
    private readonly agent: AgentFunction,
    private readonly keptRenders = 0,
  ) {}

  render(request: RenderRequest, renderId = newId("rnd")): RenderedAgent {
    const result = renderAgent(this.agent, {
      input: request.input,
      builtInToolIds: request.builtInToolIds,
      ...(request.memory ? { memory: request.memory } : {}),
      ...(request.sessionData ? { sessionData: request.sessionData } : {}),
    });
    const tools = new Map(result.tools.map((t) => [t.name, t]));
    if (this.keptRenders > 0) this.keep(renderId, tools);
    const rendered: RenderedAgent = {
      renderId,
      request,
      instructions: result.instructions,
      model: result.model,
      tools: result.tools.map(describeTool),
      builtInTools: result.builtInTools,
      memory: result.memory,
      mcpServers: result.mcpServers,
      subagents: result.subagents,
      connections: result.connections,
    };
    this.byObject.set(rendered, tools);
    return rendered;
  }

  async runTool(
    ref: RenderRef,
    name: string,
    request: Omit<RunToolRequest, "reportProgress"> & {
      reportProgress(metadata: JsonValue): Promise<void>;
    },
  ): Promise<CodeOutcome> {
    const tool = this.tool(ref, name);
    if (typeof tool === "string") return { ok: false, message: tool };
    // A call whose turn was cancelled before its code started is not started: the tool would get
    // a signal already aborted, and a listener it adds to one never fires.
    if (request.signal?.aborted) {
      return {
        ok: false,
        message: `${tool.name} did not run: the call was cancelled before it started (${messageOf(request.signal.reason)})`,
      };
    }
    let progressError: string | null = null;
    let output: unknown;
    try {
      output = await withEgress(request.egress, request.signal, () =>
        tool.run!({
          input: request.input,
          sessionId: request.sessionId,
          messageId: request.messageId,
          toolCallId: request.toolCallId,
          agentId: request.agentId,
          signal: request.signal,
          reportProgress: async (metadata: unknown) => {
            let value: JsonValue;
            try {
              value = assertJsonCompatible(metadata, "$");
            } catch (error) {
              progressError = `${tool.name} reported progress that is not JSON-compatible: ${(error as Error).message}`;
              throw error;
            }
            await request.reportProgress(value);
          },
        }),
      );
    } catch (error) {
      return { ok: false, message: progressError ?? messageOf(error) };
    }
    if (progressError) return { ok: false, message: progressError };
    try {
      return { ok: true, value: assertJsonCompatible(output === undefined ? null : output, "$") };
    } catch (error) {
      return {
        ok: false,
        message: `${tool.name} returned a value that is not JSON-compatible: ${(error as Error).message}`,
      };
    }
  }

  async previewTool(ref: RenderRef, name: string, request: PreviewRequest): Promise<CodeOutcome> {
    const tool = this.tool(ref, name);
    if (typeof tool === "string") return { ok: false, message: tool };
    let card: unknown;
    try {
      card = await withEgress(request.egress, request.signal, () =>
        tool.preview!({ input: request.input, signal: request.signal }),
      );
    } catch (error) {
      return {
        ok: false,
        message: `${tool.name}'s preview failed: ${(error as Error)?.message ?? String(error)}`,
      };
    }
    try {
      return { ok: true, value: assertJsonCompatible(card, "$") };
    } catch (error) {
      return {
        ok: false,
        message: `${tool.name}'s preview returned a card that is not JSON-compatible: ${(error as Error).message}`,
      };
    }
  }

  async applyTool(ref: RenderRef, name: string, request: ApplyRequest): Promise<CodeOutcome> {
    const tool = this.tool(ref, name);
    if (typeof tool === "string") return { ok: false, message: tool };
    try {
      const outcome = await withEgress(request.egress, request.signal, () =>
        tool.apply!({ input: request.input, decision: request.decision, signal: request.signal }),
      );
      return applyOutcome(tool.name, outcome);
    } catch (error) {
      return { ok: false, message: (error as Error)?.message ?? String(error) };
    }
  }

  /** The tool object the render selected; rendered again when that render is no longer kept. */
  private tool(ref: RenderRef, name: string): Tool | string {
    let tools = this.byObject.get(ref) ?? this.renders.get(ref.renderId);
    if (!tools) {
      try {
        tools = this.byObject.get(this.render(ref.request, ref.renderId))!;
      } catch (error) {
        return `The agent failed to render again for ${name}: ${messageOf(error)}`;
      }
    }
    return tools.get(name) ?? `The agent no longer selects the tool ${name}`;
  }

  private keep(renderId: string, tools: Map<string, Tool>): void {
    this.renders.delete(renderId);
    this.renders.set(renderId, tools);
    if (this.renders.size > this.keptRenders) {
      this.renders.delete(this.renders.keys().next().value as string);
    }
  }
}

export function describeTool(tool: Tool): ToolDescriptor {
  const d: ToolDescriptor = {
    name: tool.name,
    description: tool.description,
    result: tool.result,
    kind: tool.kind,
  };
  if (tool.input !== undefined) d.input = tool.input;
  if (tool.output !== undefined) d.output = tool.output;
  return d;
}

export function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message || error.name;
  return typeof error === "string"
    ? error
    : `The tool threw ${JSON.stringify(error) ?? String(error)}`;
}

export type { Egress };
