// tool_schema_not_strict concerns OpenAI only: an agent whose useModel calls can only select
// other providers gets no warning; one that may select OpenAI (literally, in a branch, through a
// computed id, or by the build's OPENCOMPUTER_MODEL) does.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkProject } from "../src/index.ts";
import { writeProject } from "./helpers.ts";

const TOOL = `import { defineTool } from "@opencomputer/agent";
export const note = defineTool({
  name: "note",
  description: "Write a note",
  input: { type: "object", properties: { text: { type: "string", minLength: 1 } } },
  run: ({ input }) => ({ saved: String(input.text) }),
});
`;

function agent(modelLines: string): string {
  return `import { useInput, useModel, useTool } from "@opencomputer/agent";
import { note } from "./tools/note.ts";
const FAST = "openai/gpt-4.1-mini";
export default function Agent() {
  const input = useInput();
  ${modelLines}
  useTool(note);
  return "Take notes.";
}
`;
}

// biome-ignore format: one agent per line reads as a table
const AGENTS: Record<string, string> = {
  anthropic: `useModel("anthropic/claude-sonnet-4.6");`,
  "anthropic-branches": `useModel(input.text?.includes("deep") ? "anthropic/claude-sonnet-4.6" : "anthropic/claude-haiku-4.5");`,
  "anthropic-object": `useModel({ provider: "anthropic", model: "claude-sonnet-4.6" });`,
  "no-model": ``,
  openai: `useModel("openai/gpt-4.1");`,
  "openai-branch": `useModel(input.text ? "anthropic/claude-sonnet-4.6" : "openai/gpt-4.1");`,
  computed: `useModel(FAST);`,
};

let project: { dir: string; remove: () => void };
beforeAll(() => {
  const files: Record<string, string> = {};
  for (const [id, lines] of Object.entries(AGENTS)) {
    files[`opencomputer/agents/${id}/agent.ts`] = agent(lines);
    files[`opencomputer/agents/${id}/tools/note.ts`] = TOOL;
  }
  project = writeProject(files);
});
afterAll(() => project.remove());

const warned = (warnings: Array<{ agentId: string }>) =>
  [...new Set(warnings.map((w) => w.agentId))].sort();

describe("strict-mode warnings and the models an agent can select", () => {
  it("warn only for agents an OpenAI model can serve", async () => {
    const result = await checkProject(project.dir, { modelOverride: undefined });
    expect(result.errors).toEqual([]);
    expect(warned(result.warnings)).toEqual(["computed", "openai", "openai-branch"]);
  });

  it("follow the build's OPENCOMPUTER_MODEL, which replaces every choice", async () => {
    const openai = await checkProject(project.dir, { modelOverride: "openai/gpt-4.1" });
    expect(warned(openai.warnings)).toEqual(Object.keys(AGENTS).sort());
    const scripted = await checkProject(project.dir, { modelOverride: "script/demo" });
    expect(scripted.warnings).toEqual([]);
  });
});
