// Warnings, not errors: a tool whose input schema OpenAI's strict mode cannot take still works
// (the OpenAI adapter sends it with `strict: false`, and the runtime validates every call's
// input itself), but its arguments are then only the model's best effort. The rules live in
// @opencomputer/models (strict-schema.ts) so this warning and the adapter's choice never differ.

import { strictSchemaIssues } from "@opencomputer/models/strict-schema";
import type { BuildWarning } from "./errors.ts";
import type { LoadResult } from "./load-tools.ts";
import { mayUseOpenAI, modelChoices } from "./model-choices.ts";
import { positionOf } from "./parse.ts";
import type { AgentState } from "./sources.ts";

/**
 * One warning per agent, tool and schema location that strict mode refuses, for the agents an
 * OpenAI model can serve (model-choices.ts): a model id computed at render, an `openai/...` id,
 * or `modelOverride` (OPENCOMPUTER_MODEL) naming one.
 */
export function strictSchemaWarnings(
  states: AgentState[],
  loaded: LoadResult,
  modelOverride?: string,
): BuildWarning[] {
  const warnings: BuildWarning[] = [];
  // A schema is checked once, however many agents share its module.
  const issuesOf = new Map<unknown, ReturnType<typeof strictSchemaIssues>>();
  for (const state of states) {
    const agentId = state.entry.agentId;
    if (!mayUseOpenAI(modelChoices(state.modules, modelOverride))) continue;
    for (const tool of state.tools) {
      if (!tool.name) continue;
      const found = loaded.loaded.get(tool.mod.file)?.find((t) => t.name === tool.name);
      // No input schema: the runtime sends an empty object schema, nothing for the author to fix.
      if (!found || found.input === undefined) continue;
      let issues = issuesOf.get(found.input);
      if (!issues) {
        issues = strictSchemaIssues(found.input);
        issuesOf.set(found.input, issues);
      }
      for (const { path, reason } of issues) {
        warnings.push({
          code: "tool_schema_not_strict",
          message: `agent "${agentId}", tool "${tool.name}": input schema at ${path}: ${reason}; OpenAI models get this tool without strict mode`,
          file: tool.mod.rel,
          ...positionOf(tool.mod, tool.call),
          agentId,
          tool: tool.name,
          path,
          reason,
        });
      }
    }
  }
  return warnings;
}
