import type {
  LanguageModelV3CallOptions,
  LanguageModelV3Content,
  LanguageModelV3GenerateResult,
  LanguageModelV3StreamPart,
  LanguageModelV3Usage,
} from "@ai-sdk/provider";
import {
  type ModelContext,
  ModelError,
  WEB_SEARCH_ID,
  WHOLE_STEPS,
  type WholeStepsModel,
  withProviderTools,
} from "@opencomputer/runtime";
import { loadScriptFile, type ScriptStep, scriptFile, scriptStep } from "./script-file.ts";

import { checkSearchDeclared, SCRIPT_WEB_SEARCH, searchParts } from "./script-web-search.ts";

/**
 * `script/<name>`: a model that answers from `opencomputer/scripts/<name>.json`. The step it plays
 * is the number of assistant messages already in the prompt, so a conversation replays the same
 * way after a restart and needs no state of its own.
 *
 * The file is looked at again (a `stat`, and a read when it changed) whenever a step starts a
 * turn: the prompt ends with the user's message, not with tool results. A turn's later steps use
 * the copy read then. So a script written just before a turn is sent plays in that turn, a turn
 * never mixes two versions of its script, and a step that only continues a turn skips a syscall
 * (about 8 µs here, a few percent of the engine benchmark's run).
 */
/** A step and the model call (0-based, in the conversation) it is played as. */
interface Played {
  step: ScriptStep;
  index: number;
}

export function createScriptModel(name: string, context: ModelContext): WholeStepsModel {
  const modelId = `script/${name}`;
  // The path is worked out once per model (the resolver keeps one per project and name).
  const file = scriptFile(context.projectDir, name, modelId);
  const model: WholeStepsModel = {
    specificationVersion: "v3",
    provider: "script",
    modelId,
    supportedUrls: {},
    // Every part of a step is ready at once (a step's delay comes first): the engine asks
    // doGenerate, and doStream stays for anything else that streams it.
    [WHOLE_STEPS]: true,
    async doGenerate(options): Promise<LanguageModelV3GenerateResult> {
      const found = stepFor(file, modelId, options);
      const play = found instanceof Promise ? await found : found;
      return {
        content: contentOf(play),
        finishReason: finishOf(play.step),
        usage: usageOf(play.step),
        warnings: [],
      };
    },
    async doStream(options) {
      const play = await stepFor(file, modelId, options);
      const parts = streamParts(play);
      const stream = new ReadableStream<LanguageModelV3StreamPart>({
        start(controller) {
          for (const part of parts) controller.enqueue(part);
          controller.close();
        },
      });
      return { stream };
    },
  };
  // Like Anthropic and OpenAI, it serves `useTool("web-search")`: with the step's `webSearch`.
  withProviderTools(model, { [WEB_SEARCH_ID]: SCRIPT_WEB_SEARCH });
  return model;
}

/**
 * The step to play, or a promise of it when the step has a delay (a step without one is
 * handed over at once: one await less on every model call).
 */
function stepFor(
  file: ReturnType<typeof scriptFile>,
  modelId: string,
  options: LanguageModelV3CallOptions,
): Played | Promise<Played> {
  const prompt = options.prompt;
  const continuesTurn = prompt.length > 0 && prompt[prompt.length - 1]!.role === "tool";
  if (typeof file !== "string") {
    throw new ModelError("model_unavailable", file.message, modelId);
  }
  const script = loadScriptFile(file, modelId, !continuesTurn);
  let index = 0;
  for (const message of prompt) if (message.role === "assistant") index++;
  const step = scriptStep(script, index);
  if (!step) {
    throw new ModelError(
      "model_rejected",
      `${modelId} has ${script.steps.length} steps; step ${index + 1} was requested`,
      modelId,
      400,
    );
  }
  checkSearchDeclared(step, options, modelId, index);
  const play = { step, index };
  if (step.delayMs) return sleep(step.delayMs, options.abortSignal).then(() => played(play));
  return played(play);
}

/** A step's error is thrown when it is played, after its delay. */
function played(play: Played): Played {
  const { step } = play;
  if (step.error) {
    const error = new Error(step.error.message) as Error & { statusCode: number };
    error.statusCode = step.error.status;
    throw error;
  }
  return play;
}

function contentOf({ step, index }: Played): LanguageModelV3Content[] {
  // The call's index in the conversation keeps search call ids unique in the session.
  const content: LanguageModelV3Content[] = searchParts(step, index);
  if (step.reasoning) content.push({ type: "reasoning", text: step.reasoning });
  if (step.text) content.push({ type: "text", text: step.text });
  step.toolCalls?.forEach((call, i) => {
    content.push({
      type: "tool-call",
      toolCallId: `script_${i}`,
      toolName: call.name,
      input: call.inputText ?? JSON.stringify(call.input ?? {}),
    });
  });
  return content;
}

/** The step as stream parts, all ready at once (a step's delay comes before the stream). */
function streamParts(play: Played): LanguageModelV3StreamPart[] {
  const parts: LanguageModelV3StreamPart[] = [{ type: "stream-start", warnings: [] }];
  for (const part of contentOf(play)) {
    if (part.type === "text" || part.type === "reasoning") {
      const kind = part.type;
      // One delta per text: splitting it into words would only give the engine more to read
      // and coalesce into the same events.
      parts.push(
        { type: `${kind}-start`, id: kind },
        { type: `${kind}-delta`, id: kind, delta: part.text },
        { type: `${kind}-end`, id: kind },
      );
    } else if (part.type === "tool-call" || part.type === "tool-result") {
      parts.push(part);
    }
  }
  parts.push({ type: "finish", usage: usageOf(play.step), finishReason: finishOf(play.step) });
  return parts;
}

function finishOf(step: ScriptStep): LanguageModelV3GenerateResult["finishReason"] {
  const calls = step.toolCalls?.length ?? 0;
  return { unified: calls > 0 ? "tool-calls" : "stop", raw: undefined };
}

function usageOf(step: ScriptStep): LanguageModelV3Usage {
  const input = step.usage?.inputTokens ?? 0;
  const output = step.usage?.outputTokens ?? 0;
  return {
    inputTokens: { total: input, noCache: input, cacheRead: 0, cacheWrite: 0 },
    outputTokens: { total: output, text: output, reasoning: 0 },
  };
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
