// useTool("<id>") with an id no runtime provides is refused by doctor and build where it is
// written, in any module the agent loads (the docs' custom hook in its own file included).

import { afterEach, describe, expect, it } from "vitest";
import { checkProject } from "../src/index.ts";
import { at, writeProject } from "./helpers.ts";

const removals: Array<() => void> = [];
afterEach(() => {
  for (const remove of removals.splice(0)) remove();
});

describe("built-in tool ids", () => {
  it("reports an unknown id with file and line, and accepts the runtime's ids", async () => {
    const { dir, remove } = writeProject({
      "opencomputer/agents/researcher/hooks.ts": `import { useTool } from "@opencomputer/agent";

export function useGitHubResearch() {
  useTool("github-search");
  return "Check GitHub before making claims about repositories.";
}
`,
      "opencomputer/agents/researcher/agent.ts": `import * as oc from "@opencomputer/agent";
import { useGitHubResearch } from "./hooks.ts";

export default function Agent() {
  const input = oc.useInput();
  if (input.text?.includes("latest")) oc.useTool("web-search");
  oc.useTool("ask");
  oc.useTool("shell");
  oc.useTool("sandbox_exec");
  oc.useTool("web_fetch");
  return \`Research carefully. \${useGitHubResearch()}\`;
}
`,
    });
    removals.push(remove);
    const { errors } = await checkProject(dir);
    const found = errors.map(({ code, file, line, column }) => ({ code, file, line, column }));
    expect(found).toEqual([
      {
        code: "tool_unknown_builtin",
        ...at(dir, "opencomputer/agents/researcher/agent.ts", '"web_fetch"'),
      },
      {
        code: "tool_unknown_builtin",
        ...at(dir, "opencomputer/agents/researcher/hooks.ts", '"github-search"'),
      },
    ]);
    expect(errors[1]!.message).toContain(
      'no runtime provides a built-in tool "github-search" (built-in tools: ask, sandbox_exec, shell, web-search)',
    );
    expect(errors[1]!.message).toContain("useTool(myTool)");
  });
});
