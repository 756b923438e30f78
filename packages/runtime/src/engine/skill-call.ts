// `load_skill`: the built-in tool through which the model reads a skill the deployment packaged
// (SKILL.md's body, or one of the files beside it). Each load is a fact in the log: its
// tool.completed and a skill.loaded event are one write.

import type { LanguageModelV3FunctionTool } from "@ai-sdk/provider";
import type { JsonValue } from "@opencomputer/agent";
import { LOAD_SKILL_TOOL } from "@opencomputer/agent/internal";
import type { SkillLibrary, SkillSummary } from "../ports/agent-resources.ts";
import type { ToolCallRecord } from "../ports/records.ts";
import { commitFailure, commitSuccess } from "./tool-call.ts";
import type { TurnScope } from "./turn-scope.ts";

/** The tool the model calls, offered whenever the deployment has skills. */
export function loadSkillTool(skills: readonly SkillSummary[]): LanguageModelV3FunctionTool {
  return {
    type: "function",
    name: LOAD_SKILL_TOOL,
    description:
      "Load one of this agent's skills: without `file` it returns the skill's instructions (SKILL.md) and the list of its files; with `file` it returns that file. Load a skill before following it.",
    inputSchema: {
      type: "object",
      properties: {
        skill: { type: "string", enum: skills.map((s) => s.name) },
        file: {
          type: "string",
          description:
            "A file of the skill, as its instructions or file list name it, e.g. CHECKLIST.md",
        },
      },
      required: ["skill"],
      additionalProperties: false,
    },
  };
}

/** What the system prompt says about the skills: each one's name and description. */
export function skillsInstructions(skills: readonly SkillSummary[]): string {
  const lines = skills.map((s) => `- ${s.name}: ${s.description}`);
  return [
    "",
    "",
    `Skills (procedures packaged with this agent). When a task matches a skill's description, call ${LOAD_SKILL_TOOL} with its name and follow the instructions it returns:`,
    ...lines,
  ].join("\n");
}

export async function executeSkillCall(
  scope: TurnScope,
  call: ToolCallRecord,
  library: SkillLibrary,
) {
  const input = call.input;
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    return commitFailure(scope, call, `${LOAD_SKILL_TOOL} takes { skill, file? }`);
  }
  const { skill, file } = input as { skill?: unknown; file?: unknown };
  const summary = library.list().find((s) => s.name === skill);
  if (typeof skill !== "string" || !summary) {
    const names = library.list().map((s) => s.name);
    return commitFailure(
      scope,
      call,
      `No skill ${JSON.stringify(skill)}; this agent's skills: ${names.join(", ")}`,
      "skill_not_found",
    );
  }
  if (file !== undefined && typeof file !== "string") {
    return commitFailure(scope, call, `"file" must be a string such as "CHECKLIST.md"`);
  }
  const wanted = file === undefined || file === "SKILL.md" ? undefined : normalise(file);
  let loaded: Awaited<ReturnType<SkillLibrary["read"]>>;
  try {
    loaded = await library.read(skill, wanted);
  } catch (error) {
    scope.ctx.log.error("skill not readable", { skill, file: wanted, error: String(error) });
    return commitFailure(scope, call, `The skill ${skill} could not be read`, "skill_unreadable");
  }
  if (!loaded) {
    return commitFailure(
      scope,
      call,
      `The skill ${skill} has no file ${JSON.stringify(file)}; its files: ${summary.files.join(", ") || "none"}`,
      "skill_file_not_found",
    );
  }
  const output: JsonValue =
    wanted === undefined
      ? { skill, instructions: loaded.text, files: summary.files }
      : { skill, file: wanted, content: loaded.text };
  return commitSuccess(scope, call, output, [
    {
      type: "skill.loaded",
      turnId: scope.turn.id,
      data: {
        callId: call.callId,
        skill,
        ...(wanted === undefined ? {} : { file: wanted }),
        bytes: loaded.bytes,
      },
    },
  ]);
}

/** `./a/b.md` → `a/b.md`; the library refuses anything outside the skill's directory. */
function normalise(file: string): string {
  return file.replace(/^(\.\/)+/, "");
}
