// Runtime-provided tools, in both execution modes: the agent is in
// fixtures/built-in-tools-agents.ts; the tool (and what it records) stays in this process.

import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import type { BuiltInTool } from "../../src/ports/built-in-tool.ts";
import {
  EXECUTIONS,
  type Harness,
  type HarnessOptions,
  harness,
  ofType,
  TEST_WORKERS,
} from "./harness.ts";

const AGENTS = fileURLToPath(new URL("./fixtures/built-in-tools-agents.ts", import.meta.url));

const ended: string[] = [];
const upper: BuiltInTool = {
  id: "upper",
  description: "Upper-cases text",
  input: {
    type: "object",
    properties: { text: { type: "string", minLength: 1 } },
    required: ["text"],
  },
  async execute({ input, reportProgress, toolCallId }) {
    await reportProgress({ phase: "working" });
    const text = String(input.text);
    if (text === "fail") return { ok: false, message: "cannot upper-case fail" };
    return { ok: true, output: { text: text.toUpperCase(), toolCallId } };
  },
  async onSessionEnd(sessionId) {
    ended.push(sessionId);
  },
};

let h: Harness;
afterEach(async () => {
  ended.length = 0;
  await h?.close();
});

describe.each(EXECUTIONS)("runtime-provided tools (%s)", (execution) => {
  const start = (options: HarnessOptions) =>
    harness({ agentsModule: AGENTS, execution, workers: TEST_WORKERS, ...options });

  it("are offered to the model, validated, run, and report progress", async () => {
    h = await start({
      builtInTools: [upper],
      steps: [
        {
          toolCalls: [
            { name: "upper", input: { text: "hi" } },
            { name: "upper", input: { text: "" } },
            { name: "upper", input: { text: "fail" } },
          ],
        },
        { text: "done" },
      ],
    });
    const { sessionId, events } = await h.run("go");
    expect(ofType(events, "agent.rendered")[0]!.data.enabledTools).toEqual(["upper"]);
    const completed = ofType(events, "tool.completed");
    expect(completed).toHaveLength(1);
    expect(completed[0]!.data.output).toEqual({
      text: "HI",
      toolCallId: completed[0]!.data.callId,
    });
    const failed = ofType(events, "tool.failed").map((e) => e.data.message);
    expect(failed).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/Invalid input for upper: input\.text/),
        "cannot upper-case fail",
      ]),
    );
    expect(ofType(events, "tool.progress").length).toBeGreaterThanOrEqual(2);
    await h.runtime.sessions.end(sessionId);
    expect(ended).toEqual([sessionId]);
  });

  it("an id the runtime does not provide fails the render", async () => {
    h = await start({ steps: [{ text: "x" }] });
    const { events } = await h.run("go");
    expect(ofType(events, "turn.failed")[0]!.data.code).toBe("agent_failed");
    expect(h.logs.some((l) => JSON.stringify(l).includes("upper"))).toBe(true);
  });
});
