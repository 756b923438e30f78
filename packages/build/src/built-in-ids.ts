// `useTool("<id>")` names a tool the runtime provides. An id no runtime provides (a docs sample's
// `useTool("github-search")`, a typo) used to pass the build and fail every render; the build
// reads each literal id from source and refuses the unknown ones where they are written.

import { ASK_ID, MODEL_PROVIDED_TOOL_IDS } from "@opencomputer/runtime";
import ts from "typescript";
import type { BuildError } from "./errors.ts";
import { unwrap } from "./literal.ts";
import { errorAt, type ParsedModule } from "./parse.ts";

/**
 * Every built-in id some runtime of this project provides: `ask`, the model-provided ones
 * (`web-search`), and the computers' `shell` / `sandbox_exec`. A runtime without computers
 * offers fewer; that is the render's to say, since the build cannot know where it will run.
 */
export const BUILT_IN_TOOL_IDS: readonly string[] = [
  ASK_ID,
  ...MODEL_PROVIDED_TOOL_IDS,
  "shell",
  "sandbox_exec",
].sort();

/** One error per `useTool("<literal>")` whose id is not a built-in, in the modules given. */
export function unknownBuiltInErrors(modules: Iterable<ParsedModule>): BuildError[] {
  const errors: BuildError[] = [];
  for (const mod of modules) {
    for (const call of mod.hookCalls.useTool) {
      const arg = call.arguments[0] && unwrap(call.arguments[0]);
      // Only ids written as literals can be checked here; anything else is the render's to check.
      if (!arg || !ts.isStringLiteralLike(arg)) continue;
      const id = arg.text;
      if (BUILT_IN_TOOL_IDS.includes(id)) continue;
      errors.push(
        errorAt(
          mod,
          arg,
          "tool_unknown_builtin",
          `useTool(${JSON.stringify(id)}): no runtime provides a built-in tool ${JSON.stringify(id)} (built-in tools: ${BUILT_IN_TOOL_IDS.join(", ")}); for a tool of your own, define it with defineTool() and pass the tool itself: useTool(myTool)`,
        ),
      );
    }
  }
  return errors;
}
