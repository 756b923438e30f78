// Which model answers a step, and why. An agent that calls no useModel gets the runtime's
// default model (the platform's docs: every agent runs with a model even when it selects none);
// a resolver may replace any choice (OPENCOMPUTER_MODEL). The agent.rendered event names all
// three facts, so a reader of the log never has to guess which model answered.

import type { LanguageModelV3 } from "@ai-sdk/provider";
import type { AgentHandle } from "../ports/agent-execution.ts";
import { publicModelId } from "../ports/model.ts";
import { ModelError } from "../ports/model-error.ts";
import type { EngineContext } from "./context.ts";
import type { TurnScope } from "./turn-scope.ts";

/**
 * The model an agent gets when it calls no useModel: the one the platform's docs select in every
 * sample. Runtimes pick another with `defaultModel`.
 */
export const DEFAULT_MODEL = "anthropic/claude-sonnet-4.6";

export type ModelSource = "agent" | "default" | "override";

export interface StepModel {
  /** The id asked of the resolver: the agent's choice, or the default. */
  asked: string;
  /** What the agent selected; null when it selected none. */
  requested: string | null;
  /** The model that answers (asked, or what the resolver put in its place). */
  effective: string;
  source: ModelSource;
  model?: LanguageModelV3;
}

/** What a step asks for, before the resolver has had its say. */
export function askedModel(ctx: EngineContext, selected: string | undefined): StepModel {
  const asked = selected ?? ctx.defaultModel;
  return {
    asked,
    requested: selected ?? null,
    effective: asked,
    source: selected === undefined ? "default" : "agent",
  };
}

/** Resolves the step's model for the agent. */
export function resolveFor(scope: TurnScope, agent: AgentHandle, step: StepModel): LanguageModelV3 {
  return scope.ctx.models.resolve(step.asked, {
    projectDir: agent.projectDir,
    agentId: agent.agentId,
  });
}

/**
 * A failure of the default model, i.e. of a model the agent never chose, says so: it names the
 * agent and the default (DefaultModelUnavailableError). Other failures pass unchanged.
 */
export function explainDefault(step: StepModel, agentId: string, error: ModelError): ModelError {
  if (step.source !== "default" || error.code !== "model_unavailable") return error;
  if (error.model !== step.asked) return error;
  return new DefaultModelUnavailableError(agentId, step.asked, error);
}

/** Records the resolved model: its public id is the one that answers. */
export function resolvedModel(step: StepModel, model: LanguageModelV3): StepModel {
  const effective = publicModelId(model) ?? step.asked;
  return {
    ...step,
    model,
    effective,
    source: effective === step.asked ? step.source : "override",
  };
}

/** The model fields of agent.rendered. */
export function renderedModelData(step: StepModel) {
  return { model: step.effective, requestedModel: step.requested, modelSource: step.source };
}

/**
 * The default model was asked for and cannot serve (no key, no such provider): a typed error
 * that names the agent and both ways out, rather than the provider's bare message.
 */
export class DefaultModelUnavailableError extends ModelError {
  constructor(agentId: string, model: string, cause: ModelError) {
    super(
      "model_unavailable",
      `Agent "${agentId}" selects no model, so it gets the default model ${model}, which cannot serve: ${cause.message}. Call useModel("provider/model") in the agent, or make the default available`,
      model,
      cause.status,
      { cause },
    );
    this.details.agentId = agentId;
    this.details.path = "useModel";
  }
}
