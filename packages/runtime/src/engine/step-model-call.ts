// The model call of one step: resolve the model, offer the tools, stream deltas into the log,
// and turn a failure into the turn's failure.

import type { LanguageModelV3 } from "@ai-sdk/provider";
import type { AgentHandle, RenderedAgent } from "../ports/agent-execution.ts";
import { BuiltInUnavailableError, providerToolsForStep } from "../ports/built-in-tool.ts";
import { ModelError, toModelError } from "../ports/model-error.ts";
import { providerToolsOf } from "../ports/provider-tools.ts";
import type { NewEvent } from "../ports/store.ts";
import type { SpanHandle } from "../ports/tracing.ts";
import type { RenderCapabilities } from "./capabilities.ts";
import { write } from "./context.ts";
import { type StepOutput, streamStep } from "./model-stream.ts";
import { isFenceRefusal } from "./refusal.ts";
import { explainDefault, resolvedModel, resolveFor, type StepModel } from "./step-model.ts";
import { modelTools } from "./step-tools.ts";
import { failTurn } from "./turn-render.ts";
import { guard, type TurnScope } from "./turn-scope.ts";
import { usageAttributes } from "./turn-spans.ts";

export interface StepCall {
  scope: TurnScope;
  agent: AgentHandle;
  render: RenderedAgent;
  caps: RenderCapabilities;
  stepSpan: SpanHandle;
  messageId: string;
  /** The model asked for; the model call replaces it with what resolved (agent.rendered says it). */
  stepModel: StepModel;
  /** Puts agent.rendered (once) before the first events the step writes. */
  withRendered: (events: NewEvent[]) => NewEvent[];
}

export interface ModelAnswer {
  model: LanguageModelV3;
  stepModel: StepModel;
  response: StepOutput;
}

/** The model's answer, or null when the turn is over (failed here, aborted or fenced off). */
export async function callModel(step: StepCall): Promise<ModelAnswer | null> {
  const { scope, render, caps, withRendered } = step;
  const { ctx, turn } = scope;
  let chat: SpanHandle | undefined;
  try {
    const model = resolveFor(scope, step.agent, step.stepModel);
    step.stepModel = resolvedModel(step.stepModel, model);
    // Built-ins the model provider runs itself (web search): the model must offer them.
    const providerTools = providerToolsForStep(
      render.builtInTools,
      scope.builtInToolIds,
      ctx.builtInTools,
      providerToolsOf(model),
      step.stepModel.effective,
    );
    if (providerTools instanceof BuiltInUnavailableError) throw providerTools;
    chat = step.stepSpan.child(`chat ${model.modelId}`, {
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": model.provider,
      "gen_ai.request.model": model.modelId,
    });
    const response = await streamStep(
      model,
      {
        prompt: scope.conversation.toPrompt(render.instructions + caps.instructions),
        tools: modelTools(scope, render, providerTools, caps),
        abortSignal: scope.signal,
      },
      async (kind, text) => {
        await write(ctx, scope.sessionId, {
          ...guard(scope),
          ops: [],
          events: withRendered([
            { type: `${kind}.delta`, turnId: turn.id, data: { messageId: step.messageId, text } },
          ]),
        });
      },
    );
    chat.setAttributes(usageAttributes(response));
    chat.end();
    return { model, stepModel: step.stepModel, response };
  } catch (error) {
    chat?.fail(
      error instanceof ModelError ? error.code : "model_unavailable",
      error instanceof ModelError ? error.message : "The model call failed",
    );
    chat?.end();
    if (scope.signal.aborted || isFenceRefusal(error)) return null;
    if (error instanceof BuiltInUnavailableError) {
      const message = `Agent ${scope.agentId}: ${error.message}`;
      await failTurn(scope, { code: "agent_failed", message, tool: error.tool }, withRendered([]));
      return null;
    }
    const e = explainDefault(
      step.stepModel,
      scope.agentId,
      error instanceof ModelError ? error : toModelError(error, step.stepModel.effective),
    );
    await failTurn(scope, { code: e.code, message: e.message, model: e.model }, withRendered([]));
    return null;
  }
}
