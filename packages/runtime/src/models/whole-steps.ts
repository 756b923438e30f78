import type { LanguageModelV3 } from "@ai-sdk/provider";

/**
 * Marks a model whose steps come whole: its stream would hand every part over at once (the
 * scripted model), so streaming it gives no delta and the engine asks `doGenerate` for the same
 * content instead. Why: on Node 20 building a ReadableStream costs about 10 µs, a tenth of an
 * engine run on the scripted model, for nothing.
 */
export const WHOLE_STEPS: unique symbol = Symbol.for("opencomputer.model.wholeSteps");

/** A model marked as one whose steps come whole. */
export type WholeStepsModel = LanguageModelV3 & { readonly [WHOLE_STEPS]: true };

export function hasWholeSteps(model: LanguageModelV3): boolean {
  return (model as LanguageModelV3 & { [WHOLE_STEPS]?: boolean })[WHOLE_STEPS] === true;
}
