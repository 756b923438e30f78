// `opencomputer session "text"` when the agent delegates: a child's question and a child's
// approval card are asked at the keyboard like the agent's own, answered on the child, and the
// parent's turn then completes with the child's answer. Runs the one-shot loop on the embedded
// backend over a real runtime (SQLite, scripted models).

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defineTool, useModel, useSubagent, useTool } from "@opencomputer/agent";
import { createModelResolver, createScriptModel } from "@opencomputer/models";
import type { SessionEvent } from "@opencomputer/protocol";
import { createRuntime, createStaticAgents } from "@opencomputer/runtime";
import { createSqliteStore } from "@opencomputer/store-sqlite";
import { afterEach, describe, expect, it } from "vitest";
import { runAttach } from "../src/one-shot/attach.ts";
import { embeddedBackend } from "../src/one-shot/embedded-backend.ts";
import type { Keyboard } from "../src/one-shot/keyboard.ts";
import { runOneShot } from "../src/one-shot/run.ts";

const publish = defineTool({
  name: "publish",
  description: "Publish the plan",
  preview: () => ({ title: "Publish the plan", facts: [{ label: "Plan", value: "Pro" }] }),
  apply: () => ({ published: true }),
});

const agents = {
  lead() {
    useModel("script/lead");
    useSubagent("helper");
    return "Delegate to the helper.";
  },
  helper() {
    useModel("script/helper");
    useTool("ask");
    useTool(publish);
    return "Ask which plan, then publish it.";
  },
};

let dir = "";
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** A keyboard that types the given lines, in order, and records what it was asked. */
function typing(lines: string[]) {
  const prompts: string[] = [];
  const keyboard = {
    async ask(prompt: string) {
      prompts.push(prompt);
      const line = lines.shift();
      if (line === undefined) throw new Error(`no answer left for ${prompt}`);
      return line;
    },
  } as unknown as Keyboard;
  return { keyboard, prompts };
}

/** A runtime on a fresh project whose `lead` delegates to `helper` (asks, then proposes). */
async function start() {
  dir = mkdtempSync(join(tmpdir(), "oc-oneshot-sub-"));
  mkdirSync(join(dir, "opencomputer", "scripts"), { recursive: true });
  const script = (name: string, steps: unknown[]) =>
    writeFileSync(join(dir, "opencomputer", "scripts", `${name}.json`), JSON.stringify({ steps }));
  script("lead", [
    { toolCalls: [{ name: "subagent_helper", input: { task: "Pick and publish a plan" } }] },
    { text: "The helper published the plan." },
  ]);
  script("helper", [
    {
      toolCalls: [
        {
          name: "ask",
          input: { text: "Which plan?", options: [{ label: "Pro", value: "pro" }] },
        },
      ],
    },
    { toolCalls: [{ name: "publish", input: {} }] },
    { text: "Published once you approve." },
  ]);
  const store = createSqliteStore({ path: join(dir, "data.db") });
  const runtime = createRuntime({
    store,
    agents: createStaticAgents({ projectDir: dir, agents }),
    models: createModelResolver({
      providers: { script: createScriptModel },
      override: undefined,
    }),
  });
  await runtime.start();
  return { runtime, store };
}

describe("the one-shot and a delegating agent", () => {
  it("asks the child's question and card at the keyboard; the parent completes", async () => {
    const { runtime, store } = await start();
    const said: string[] = [];
    const printed: SessionEvent[] = [];
    const { keyboard, prompts } = typing(["1", "y"]);
    const outcome = await runOneShot(
      embeddedBackend(runtime, async () => {}),
      {
        agentRef: "lead",
        text: "plan it",
        print: (e) => printed.push(e),
        say: (line) => said.push(line),
        keyboard,
      },
    );
    expect(outcome.status).toBe("completed");
    expect(prompts).toEqual(["answer (1-1 or type an answer): ", "approve? [y/n]: "]);
    expect(said.join("\n")).toContain("? Which plan?");
    expect(said.join("\n")).toContain("! approval needed (publish): Publish the plan");
    expect(said.join("\n")).toMatch(/approval apr_\S+: applied/);
    const completed = printed.find((e) => e.type === "tool.completed")!;
    expect(completed.data).toMatchObject({
      tool: "subagent_helper",
      output: {
        agentId: "helper",
        text: "Published once you approve.",
        approvals: [{ tool: "publish", status: "applied" }],
      },
    });
    const waits = printed.filter((e) => e.type === "subagent.waiting").map((e) => e.data);
    expect(waits).toMatchObject([{ reason: "question" }, { reason: "approval" }]);
    await runtime.close();
    await store.close();
  });

  it("session attach asks them too, once each, and returns when the parent is at rest", async () => {
    const { runtime, store } = await start();
    const { session } = await runtime.sessions.create({ agentId: "lead" });
    await runtime.sessions.sendTurn(session.id, { text: "plan it" });
    const said: string[] = [];
    const printed: SessionEvent[] = [];
    const { keyboard, prompts } = typing(["1", "y"]);
    const end = await runAttach(
      embeddedBackend(runtime, async () => {}),
      {
        sessionId: session.id,
        print: (e) => printed.push(e),
        say: (line) => said.push(line),
        keyboard,
        untilIdle: true,
      },
    );
    expect(end).toBe("idle");
    expect(prompts).toHaveLength(2);
    expect(printed.filter((e) => e.type === "turn.completed")).toHaveLength(1);
    expect(printed.find((e) => e.type === "tool.completed")!.data).toMatchObject({
      output: { text: "Published once you approve." },
    });
    await runtime.close();
    await store.close();
  });
});
