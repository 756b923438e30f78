// Which models an agent can select, read from its useModel calls without running them. The
// OpenAI strict-mode warning concerns only agents an OpenAI model can serve; an agent that only
// ever selects Anthropic models should not be told to change its schemas for OpenAI.

import { DEFAULT_MODEL } from "@opencomputer/runtime";
import ts from "typescript";
import { propertyKey, unwrap } from "./literal.ts";
import type { ParsedModule } from "./parse.ts";

/** The providers a set of modules can select: literal ids, or `unknown` when one is computed. */
export type ModelChoices = { known: true; providers: Set<string> } | { known: false };

/**
 * The providers the agent's useModel calls name. No call at all means the default model; an
 * `override` (OPENCOMPUTER_MODEL where the build runs) replaces every choice, as at run time.
 */
export function modelChoices(modules: readonly ParsedModule[], override?: string): ModelChoices {
  if (override) return { known: true, providers: new Set([providerOf(override)]) };
  const providers = new Set<string>();
  let calls = 0;
  for (const mod of modules) {
    for (const call of mod.hookCalls.useModel) {
      calls++;
      const arg = call.arguments[0];
      if (!arg || !collect(unwrap(arg), providers)) return { known: false };
    }
  }
  if (calls === 0) providers.add(providerOf(DEFAULT_MODEL));
  return { known: true, providers };
}

/** Whether an OpenAI model (the one adapter that sends `strict`) may serve the agent. */
export function mayUseOpenAI(choices: ModelChoices): boolean {
  return !choices.known || choices.providers.has("openai");
}

/** Adds the provider(s) an argument names; false when it cannot be read without running code. */
function collect(e: ts.Expression, providers: Set<string>): boolean {
  if (ts.isStringLiteralLike(e)) {
    providers.add(providerOf(e.text));
    return true;
  }
  if (ts.isConditionalExpression(e)) {
    return collect(unwrap(e.whenTrue), providers) && collect(unwrap(e.whenFalse), providers);
  }
  if (ts.isObjectLiteralExpression(e)) {
    for (const property of e.properties) {
      if (!ts.isPropertyAssignment(property) || propertyKey(property.name) !== "provider") continue;
      const value = unwrap(property.initializer);
      if (!ts.isStringLiteralLike(value)) return false;
      providers.add(value.text);
      return true;
    }
  }
  return false;
}

function providerOf(modelId: string): string {
  const slash = modelId.indexOf("/");
  return slash > 0 ? modelId.slice(0, slash) : modelId;
}
