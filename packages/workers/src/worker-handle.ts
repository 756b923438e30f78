// One deployment's agent code as the engine sees it (an AgentHandle), run by a pool of worker
// processes. Every call goes through the pool, which picks (or starts) the worker for it.
//
// The engine renders before every model step, and after a step's tool call the next step comes
// at once: so a `run` that is the only call of its render in flight asks its worker to render
// the same request right after the outcome, and the next render with that request (the same
// turn input object, the same built-in tool ids) takes it instead of another round trip. It is
// still made after the call and before the next step, by the same code, and fails the step as
// that render would have; one lost with its worker, or that did not come, is made again.

import type { AgentHandle, AgentLocation, RenderedAgent } from "@opencomputer/runtime";
import type { WorkerPool } from "./worker-pool.ts";
import type { NextRender } from "./worker-process.ts";
import { wireRequest } from "./worker-process.ts";

/** Calls in flight for one render input, and whether two of them overlapped. */
interface InputCalls {
  inFlight: number;
  overlapped: boolean;
}

export class WorkerHandle implements AgentHandle {
  readonly agentId: string;
  readonly deploymentId: string;
  readonly projectDir: string;
  /** Renders a worker made after a call, by the turn input object they were made for. */
  private readonly nextRenders = new WeakMap<
    object,
    { builtInToolIds: readonly string[]; next: Promise<NextRender | undefined> }
  >();
  private readonly callsByInput = new WeakMap<object, InputCalls>();

  constructor(
    location: AgentLocation,
    readonly pool: WorkerPool,
  ) {
    this.agentId = location.agentId;
    this.deploymentId = location.deploymentId;
    this.projectDir = location.projectDir;
  }

  async render(request: RenderedAgent["request"]): Promise<RenderedAgent> {
    const key = keyOf(request.input);
    const kept = key && this.nextRenders.get(key);
    if (key && kept) {
      this.nextRenders.delete(key);
      // A render with memory must see what was recalled for it, not the previous step's recall.
      if (request.memory === undefined && sameIds(kept.builtInToolIds, request.builtInToolIds)) {
        const made = await kept.next;
        if (made && "error" in made) throw made.error;
        if (made) return { ...made.render, request };
      }
    }
    const render = await this.pool.use((worker) => worker.render(request), ownerOf(request.input));
    // The caller's own request object, so a call made with this render can find its input.
    return { ...render, request };
  }

  runTool(render: RenderedAgent, tool: string, request: Parameters<AgentHandle["runTool"]>[2]) {
    return this.counted(render, (onNextRender) =>
      this.pool.use(
        (worker) =>
          worker.invoke(
            {
              type: "run",
              render: ref(render),
              tool,
              call: {
                input: request.input,
                sessionId: request.sessionId,
                messageId: request.messageId,
                toolCallId: request.toolCallId,
                agentId: request.agentId,
              },
              ...(request.egress ? { egress: request.egress } : {}),
            },
            request.signal,
            request.reportProgress,
            onNextRender,
          ),
        ownerOf(render.request.input, request.sessionId),
      ),
    );
  }

  previewTool(
    render: RenderedAgent,
    tool: string,
    request: Parameters<AgentHandle["previewTool"]>[2],
  ) {
    return this.counted(render, () =>
      this.pool.use(
        (worker) =>
          worker.invoke(
            {
              type: "preview",
              render: ref(render),
              tool,
              input: request.input,
              ...(request.egress ? { egress: request.egress } : {}),
            },
            request.signal,
          ),
        ownerOf(render.request.input),
      ),
    );
  }

  applyTool(render: RenderedAgent, tool: string, request: Parameters<AgentHandle["applyTool"]>[2]) {
    return this.counted(render, () =>
      this.pool.use(
        (worker) =>
          worker.invoke(
            {
              type: "apply",
              render: ref(render),
              tool,
              input: request.input,
              decision: request.decision,
              ...(request.egress ? { egress: request.egress } : {}),
            },
            request.signal,
          ),
        ownerOf(render.request.input),
      ),
    );
  }

  /**
   * Counts a call against its render's input while it is in flight. A call that stayed the only
   * one gets to keep the render its worker makes next; once calls overlap, none does (which of
   * them finished last, and so which render follows all of them, is not known here).
   */
  private async counted<T>(
    render: RenderedAgent,
    call: (onNextRender?: (next: Promise<NextRender | undefined>) => void) => Promise<T>,
  ): Promise<T> {
    const key = keyOf(render.request.input);
    if (!key) return call();
    let calls = this.callsByInput.get(key);
    if (!calls) {
      calls = { inFlight: 0, overlapped: false };
      this.callsByInput.set(key, calls);
    }
    if (calls.inFlight > 0) calls.overlapped = true;
    calls.inFlight++;
    // Whatever a worker rendered before this call no longer follows the latest one.
    this.nextRenders.delete(key);
    const state = calls;
    try {
      return await call((next) => {
        if (!state.overlapped) {
          this.nextRenders.set(key, { builtInToolIds: render.request.builtInToolIds, next });
        }
      });
    } finally {
      if (--state.inFlight === 0) state.overlapped = false;
    }
  }

  stop(): void {
    this.pool.stop("was stopped: the runtime closed");
  }
}

/** What a worker needs to find the render's tools, or to render again when it has not got it. */
function ref(render: RenderedAgent) {
  return {
    renderId: render.renderId,
    request: wireRequest(render.request),
  };
}

/**
 * Whose call this is, for the pool's one-owner-per-worker rule: the turn's input object (one per
 * turn, so one session's), else the session, else nobody else's (a fresh object).
 */
function ownerOf(input: unknown, sessionId?: string): unknown {
  return keyOf(input) ?? sessionId ?? {};
}

function keyOf(input: unknown): object | undefined {
  return typeof input === "object" && input !== null ? input : undefined;
}

function sameIds(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((id, i) => id === b[i]);
}
