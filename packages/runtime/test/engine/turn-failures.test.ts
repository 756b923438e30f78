// Turns that fail, in both execution modes: the agents are in fixtures/turn-failures-agents.ts.

import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import {
  EXECUTIONS,
  type Harness,
  type HarnessOptions,
  harness,
  ofType,
  TEST_WORKERS,
} from "./harness.ts";

const AGENTS = fileURLToPath(new URL("./fixtures/turn-failures-agents.ts", import.meta.url));

let h: Harness;
afterEach(async () => {
  await h?.close();
});

describe.each(EXECUTIONS)("a turn fails with a public code (%s)", (execution) => {
  async function failedTurn(options: HarnessOptions, agentId = "agent") {
    h = await harness({ agentsModule: AGENTS, execution, workers: TEST_WORKERS, ...options });
    const { sessionId, turnId, events } = await h.run("go", agentId);
    const turn = (await h.store.getTurn(sessionId, turnId))!;
    return { turn, events, failed: ofType(events, "turn.failed")[0], sessionId };
  }

  it("when it exceeds its step limit", async () => {
    const { turn, failed, events } = await failedTurn({
      maxSteps: 3,
      steps: Array.from({ length: 5 }, () => ({ toolCalls: [{ name: "ping" }] })),
    });
    expect(turn.status).toBe("failed");
    expect(failed!.data).toMatchObject({
      code: "agent_failed",
      message: expect.stringMatching(/limit of 3 model steps/),
    });
    expect(ofType(events, "agent.rendered")).toHaveLength(3);
  });

  it("when the agent's render throws: agent_failed, the author's error only in the log", async () => {
    const { failed, events } = await failedTurn({ steps: [{ text: "unused" }] }, "broken");
    expect(failed!.data).toMatchObject({ code: "agent_failed" });
    expect(failed!.data.message).toBe("Agent broken failed to render");
    expect(JSON.stringify(events)).not.toContain("hunter2");
    expect(h.logs.some((l) => JSON.stringify(l).includes("hunter2"))).toBe(true);
  });

  it("when the agent returns something that is not instructions", async () => {
    const { failed } = await failedTurn({ steps: [{ text: "x" }] }, "bad");
    expect(failed!.data.code).toBe("agent_failed");
    // The same words in both modes (the worker's RenderError keeps its message).
    expect(failed!.data.message).toBe(
      "Agent bad failed to render: The agent function must return its instructions as a string; it returned a number",
    );
  });

  it("model_unavailable for an overloaded provider, with the model named", async () => {
    const { failed, events } = await failedTurn({
      steps: [{ error: { status: 529, message: "overloaded" } }],
    });
    expect(failed!.data).toMatchObject({ code: "model_unavailable", model: "script/test" });
    // The render of the failed step is still recorded, before the failure.
    expect(ofType(events, "agent.rendered")[0]!.seq).toBeLessThan(failed!.seq);
  });

  it("model_rejected for a 400", async () => {
    const { failed } = await failedTurn({
      steps: [{ error: { status: 400, message: "bad request" } }],
    });
    expect(failed!.data).toMatchObject({ code: "model_rejected", model: "script/test" });
  });

  it("model_unavailable for an unknown provider", async () => {
    const { failed } = await failedTurn({ model: "nowhere/model-9", steps: [] });
    expect(failed!.data).toMatchObject({ code: "model_unavailable", model: "nowhere/model-9" });
    expect(failed!.data.message).toMatch(/No model provider "nowhere"/);
  });

  it("a script that runs out of steps says which step was asked for", async () => {
    const { failed } = await failedTurn({
      steps: [{ toolCalls: [{ name: "ping" }] }],
    });
    expect(failed!.data.message).toMatch(/has 1 steps; step 2 was requested/);
  });

  it("leaves the session usable for the next turn", async () => {
    const { sessionId } = await failedTurn({
      steps: [{ error: { status: 500, message: "x" } }],
    });
    expect((await h.runtime.sessions.get(sessionId)).status).toBe("idle");
    h.script("test", [{ text: "fine now" }]);
    const { turnId } = await h.runtime.sessions.sendTurn(sessionId, { text: "again" });
    expect((await h.runtime.sessions.waitForTurn(sessionId, turnId)).status).toBe("completed");
  });
});
