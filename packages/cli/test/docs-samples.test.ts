// A project written from the platform docs' samples (fixtures/docs-samples, in our own words,
// the same APIs), built and run through the CLI on the scripted model, so the documented forms
// keep working: project.ts, an agent without useModel, the shell every session has, a custom
// hook selecting web-search conditionally, conditional and object-form useModel, a tool.

import { execFile } from "node:child_process";
import { cpSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const run = promisify(execFile);
const repo = resolve(import.meta.dirname, "../../..");
const bin = join(repo, "packages/cli/bin/opencomputer.js");
const FIXTURE = join(import.meta.dirname, "fixtures/docs-samples");
// Inside the repository so the project's `@opencomputer/agent` import resolves as a user's would.
const base = join(repo, "test-output", `docs-samples-${process.pid}`);

// biome-ignore lint/suspicious/noExplicitAny: NDJSON events read loosely and checked with expect
type Loose = any;

async function cli(dir: string, args: string[], env: Record<string, string> = {}) {
  try {
    const { stdout, stderr } = await run(process.execPath, [bin, ...args], {
      env: { ...process.env, OPENCOMPUTER_MODEL: "", ANTHROPIC_API_KEY: "", ...env },
      cwd: dir,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

/** A fresh copy of the fixture, optionally with files replaced. */
function copy(name: string, files: Record<string, string> = {}): string {
  const dir = join(base, name);
  cpSync(FIXTURE, dir, { recursive: true });
  for (const [file, text] of Object.entries(files)) writeFileSync(join(dir, file), text);
  return dir;
}

async function session(dir: string, agent: string, text: string, model?: string) {
  const result = await cli(
    dir,
    ["session", "--agent", agent, "--json", text],
    model ? { OPENCOMPUTER_MODEL: model } : {},
  );
  const lines = result.stdout
    .trim()
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as Loose);
  const ofType = (type: string) => lines.filter((e) => e.type === type);
  return { ...result, ofType };
}

let project: string;
beforeAll(() => {
  mkdirSync(base, { recursive: true });
  project = copy("main");
});
afterAll(() => rmSync(base, { recursive: true, force: true }));

// Each test starts the CLI (a build with its sandboxed load, then a runtime) once or twice.
describe("the platform docs' samples", { timeout: 120_000 }, () => {
  it("pass doctor with project.ts, and no OpenAI strict-mode warning for Anthropic-only agents", async () => {
    const { code, stdout, stderr } = await cli(project, ["doctor"]);
    expect(code, stderr).toBe(0);
    expect(stdout).toContain("hello-world: ok");
    expect(stdout).toContain("researcher: ok");
    expect(stdout).toContain("support: ok (1 tools");
    expect(stderr).not.toContain("tool_schema_not_strict");
  });

  it("an agent without useModel runs with the shell it never selected", async () => {
    const s = await session(project, "hello-world", "Plan the workshop.", "script/hello");
    expect(s.code, s.stderr).toBe(0);
    expect(s.ofType("agent.rendered")[0].data).toMatchObject({
      model: "script/hello",
      requestedModel: null,
      modelSource: "override",
      enabledTools: ["shell"],
    });
    expect(s.ofType("tool.completed")[0].data).toMatchObject({
      tool: "shell",
      output: { exitCode: 0, stdout: "planned\n" },
    });
    expect(s.ofType("message.completed").at(-1).data.text).toBe("The workshop is planned.");
  });

  it("without OPENCOMPUTER_MODEL it gets the default model, and says which agent when that cannot serve", async () => {
    const s = await session(project, "hello-world", "Plan the workshop.");
    expect(s.code).toBe(1);
    expect(s.ofType("agent.rendered")[0].data).toMatchObject({
      model: "anthropic/claude-sonnet-4.6",
      requestedModel: null,
      modelSource: "default",
    });
    const failed = s.ofType("turn.failed")[0].data;
    expect(failed.code).toBe("model_unavailable");
    expect(failed.message).toContain('Agent "hello-world" selects no model');
    expect(failed.message).toContain("ANTHROPIC_API_KEY");
  });

  it("a custom hook's conditional web-search runs offline on the script's results", async () => {
    const s = await session(project, "researcher", "Find the latest guides.", "script/research");
    expect(s.code, s.stderr).toBe(0);
    expect(s.ofType("agent.rendered")[0].data).toMatchObject({
      requestedModel: "anthropic/claude-haiku-4.5",
      enabledTools: ["web-search", "shell"],
    });
    expect(s.ofType("tool.completed")[0].data).toMatchObject({
      tool: "web-search",
      providerExecuted: true,
      output: {
        queries: ["latest workshop facilitation guides"],
        results: [{ title: "Facilitation guide", url: "https://guides.example/facilitation" }],
      },
    });
  });

  it("the tools page's agent looks up an order (useModel's object form)", async () => {
    const s = await session(project, "support", "Where is B7?", "script/support");
    expect(s.code, s.stderr).toBe(0);
    expect(s.ofType("agent.rendered")[0].data.requestedModel).toBe("anthropic/claude-sonnet-4.6");
    expect(s.ofType("tool.completed")[0].data).toMatchObject({
      tool: "lookup_order",
      output: { orderId: "B7", status: "shipped" },
    });
  });

  it("shell: false in project.ts takes the shell away; a call of it fails back to the model", async () => {
    const dir = copy("no-shell", {
      "opencomputer/project.ts": `export default {
  name: "Docs samples",
  agents: ["hello-world", "researcher", "support"],
  shell: false,
};
`,
    });
    const s = await session(dir, "hello-world", "Plan the workshop.", "script/hello");
    expect(s.code, s.stderr).toBe(0);
    expect(s.ofType("agent.rendered")[0].data.enabledTools).toEqual([]);
    expect(s.ofType("tool.failed")[0].data.tool).toBe("shell");
    expect(s.ofType("tool.completed")).toEqual([]);
  });

  it("doctor reports project.ts against the directories, and unknown built-in ids, with file and line", async () => {
    const dir = copy("broken", {
      "opencomputer/project.ts": `export default {
  name: "Docs samples",
  agents: ["hello-world", "researcher", "writer"],
};
`,
      "opencomputer/agents/researcher/hooks.ts": `import { useTool } from "@opencomputer/agent";

export function useFreshSources(): string {
  useTool("github-search");
  return "Check GitHub first.";
}
`,
    });
    const { code, stderr } = await cli(dir, ["doctor"]);
    expect(code).toBe(1);
    expect(stderr).toContain("opencomputer/agents/researcher/hooks.ts:4:11: tool_unknown_builtin");
    expect(stderr).toContain("opencomputer/project.ts:3:3: project_agent_unlisted");
    expect(stderr).toContain("opencomputer/project.ts:3:41: project_agent_missing");
  });
});
