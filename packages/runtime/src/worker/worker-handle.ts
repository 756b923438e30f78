// One deployment's agent code as the engine sees it (an AgentHandle), run by a pool of worker
// processes. Every call goes through the pool, which picks (or starts) the worker for it.

import type { AgentHandle, RenderedAgent } from "../agents/execution.ts";
import type { AgentLocation } from "../agents/resolver.ts";
import type { WorkerPool } from "./worker-pool.ts";

export class WorkerHandle implements AgentHandle {
  readonly agentId: string;
  readonly deploymentId: string;
  readonly projectDir: string;

  constructor(
    location: AgentLocation,
    readonly pool: WorkerPool,
  ) {
    this.agentId = location.agentId;
    this.deploymentId = location.deploymentId;
    this.projectDir = location.projectDir;
  }

  render(request: RenderedAgent["request"]): Promise<RenderedAgent> {
    return this.pool.use((worker) => worker.render(request));
  }

  runTool(render: RenderedAgent, tool: string, request: Parameters<AgentHandle["runTool"]>[2]) {
    return this.pool.use(
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
        ),
      request.sessionId,
    );
  }

  previewTool(
    render: RenderedAgent,
    tool: string,
    request: Parameters<AgentHandle["previewTool"]>[2],
  ) {
    return this.pool.use((worker) =>
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
    );
  }

  applyTool(render: RenderedAgent, tool: string, request: Parameters<AgentHandle["applyTool"]>[2]) {
    return this.pool.use((worker) =>
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
    );
  }

  stop(): void {
    this.pool.stop("was stopped: the runtime closed");
  }
}

/** What a worker needs to find the render's tools, or to render again when it has not got it. */
function ref(render: RenderedAgent) {
  return {
    renderId: render.renderId,
    request: { input: render.request.input, builtInToolIds: [...render.request.builtInToolIds] },
  };
}
