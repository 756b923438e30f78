import type {
  LanguageModelV3,
  LanguageModelV3CallOptions,
  LanguageModelV3Content,
  LanguageModelV3FinishReason,
  LanguageModelV3Source,
  LanguageModelV3Usage,
} from "@ai-sdk/provider";
import { hasWholeSteps } from "../ports/model.ts";

/** How often streamed text becomes a `message.delta` / `reasoning.delta` event at most. */
export const DELTA_INTERVAL_MS = 50;

export interface StepOutput {
  /** Text and reasoning first, then tool calls and provider-executed results in stream order. */
  content: LanguageModelV3Content[];
  usage: LanguageModelV3Usage;
  finishReason?: LanguageModelV3FinishReason;
  /** What the provider cited (e.g. web search results), for titles the results lack. */
  sources: LanguageModelV3Source[];
}

export type DeltaSink = (kind: "message" | "reasoning", text: string) => Promise<void>;

/**
 * Runs one model step through `doStream` and assembles what `doGenerate` would return. Text and
 * reasoning are handed to `onDelta` coalesced: at most one delta per kind every
 * DELTA_INTERVAL_MS, so a long answer writes a handful of rows rather than one per token, and a
 * fast answer writes none (its `message.completed` carries the whole text). Tool calls arrive
 * assembled by the provider and run only after the step is committed. A model whose steps come
 * whole (ports/model.ts) is asked with doGenerate: a stream of it would give no delta.
 */
export function streamStep(
  model: LanguageModelV3,
  options: LanguageModelV3CallOptions,
  onDelta: DeltaSink,
): Promise<StepOutput> {
  // Not an async function itself: returning generateStep's promise from one would add a
  // promise and two ticks to every step.
  if (hasWholeSteps(model)) return generateStep(model, options);
  return streamParts(model, options, onDelta);
}

async function streamParts(
  model: LanguageModelV3,
  options: LanguageModelV3CallOptions,
  onDelta: DeltaSink,
): Promise<StepOutput> {
  const { stream } = await model.doStream(options);
  const content: LanguageModelV3Content[] = [];
  const sources: LanguageModelV3Source[] = [];
  let usage: LanguageModelV3Usage | undefined;
  let finishReason: LanguageModelV3FinishReason | undefined;
  let text = "";
  let reasoning = "";
  const pending = { message: "", reasoning: "" };
  let lastFlush = performance.now();

  const flush = async () => {
    lastFlush = performance.now();
    for (const kind of ["reasoning", "message"] as const) {
      if (pending[kind]) {
        const chunk = pending[kind];
        pending[kind] = "";
        await onDelta(kind, chunk);
      }
    }
  };

  const reader = stream.getReader();
  try {
    for (;;) {
      const { done, value: part } = await reader.read();
      if (done) break;
      switch (part.type) {
        case "text-delta":
          text += part.delta;
          pending.message += part.delta;
          break;
        case "reasoning-delta":
          reasoning += part.delta;
          pending.reasoning += part.delta;
          break;
        case "tool-call":
        case "tool-result": // only provider-executed tools (e.g. web search) send results
          content.push(part);
          break;
        case "source":
          sources.push(part);
          break;
        case "finish":
          usage = part.usage;
          finishReason = part.finishReason;
          break;
        case "error":
          throw part.error;
        default:
          break;
      }
      if (
        (pending.message || pending.reasoning) &&
        performance.now() - lastFlush >= DELTA_INTERVAL_MS
      ) {
        await flush();
      }
    }
  } finally {
    reader.releaseLock();
  }
  if (!usage) throw new Error("The model's stream ended before it finished");
  const out: LanguageModelV3Content[] = [];
  if (reasoning) out.push({ type: "reasoning", text: reasoning });
  if (text) out.push({ type: "text", text });
  return { content: [...out, ...content], usage, finishReason, sources };
}

/** A whole step through doGenerate, in streamStep's shape (text and reasoning joined, first). */
async function generateStep(
  model: LanguageModelV3,
  options: LanguageModelV3CallOptions,
): Promise<StepOutput> {
  const result = await model.doGenerate(options);
  let text = "";
  let reasoning = "";
  const content: LanguageModelV3Content[] = [];
  const sources: LanguageModelV3Source[] = [];
  for (const part of result.content) {
    if (part.type === "text") text += part.text;
    else if (part.type === "reasoning") reasoning += part.text;
    else if (part.type === "tool-call" || part.type === "tool-result") content.push(part);
    else if (part.type === "source") sources.push(part);
  }
  const out: LanguageModelV3Content[] = [];
  if (reasoning) out.push({ type: "reasoning", text: reasoning });
  if (text) out.push({ type: "text", text });
  return {
    content: [...out, ...content],
    usage: result.usage,
    finishReason: result.finishReason,
    sources,
  };
}
