import { defineTool, useModel, useTool } from "@opencomputer/agent";
import { afterEach, describe, expect, it } from "vitest";
import { type Harness, harness, ofType } from "./harness.ts";

const ping = defineTool({ name: "ping", description: "Ping", run: () => "pong" });

function agent() {
  useModel("script/test");
  useTool(ping);
  return "Ping.";
}

let h: Harness;
afterEach(async () => {
  await h?.close();
});

async function failedTurn(options: Parameters<typeof harness>[0]) {
  h = await harness(options);
  const { sessionId, turnId, events } = await h.run("go");
  const turn = (await h.store.getTurn(sessionId, turnId))!;
  return { turn, events, failed: ofType(events, "turn.failed")[0], sessionId };
}

describe("a turn fails with a public code", () => {
  it("when it exceeds its step limit", async () => {
    const { turn, failed, events } = await failedTurn({
      agents: { agent },
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
    const secret = "database password is hunter2";
    const { failed, events } = await failedTurn({
      agents: {
        broken: () => {
          throw new Error(secret);
        },
      },
      steps: [{ text: "unused" }],
    });
    expect(failed!.data).toMatchObject({ code: "agent_failed" });
    expect(JSON.stringify(events)).not.toContain("hunter2");
    expect(h.logs.some((l) => JSON.stringify(l).includes("hunter2"))).toBe(true);
  });

  it("when the agent returns something that is not instructions", async () => {
    const { failed } = await failedTurn({
      agents: { bad: () => 42 as unknown as string },
      steps: [{ text: "x" }],
    });
    expect(failed!.data.code).toBe("agent_failed");
  });

  it("model_unavailable for an overloaded provider, with the model named", async () => {
    const { failed, events } = await failedTurn({
      agents: { agent },
      steps: [{ error: { status: 529, message: "overloaded" } }],
    });
    expect(failed!.data).toMatchObject({ code: "model_unavailable", model: "script/test" });
    // The render of the failed step is still recorded, before the failure.
    expect(ofType(events, "agent.rendered")[0]!.seq).toBeLessThan(failed!.seq);
  });

  it("model_rejected for a 400", async () => {
    const { failed } = await failedTurn({
      agents: { agent },
      steps: [{ error: { status: 400, message: "bad request" } }],
    });
    expect(failed!.data).toMatchObject({ code: "model_rejected", model: "script/test" });
  });

  it("model_unavailable for an unknown provider", async () => {
    const { failed } = await failedTurn({ agents: { agent }, model: "nowhere/model-9", steps: [] });
    expect(failed!.data).toMatchObject({ code: "model_unavailable", model: "nowhere/model-9" });
    expect(failed!.data.message).toMatch(/No model provider "nowhere"/);
  });

  it("a script that runs out of steps says which step was asked for", async () => {
    const { failed } = await failedTurn({
      agents: { agent },
      steps: [{ toolCalls: [{ name: "ping" }] }],
    });
    expect(failed!.data.message).toMatch(/has 1 steps; step 2 was requested/);
  });

  it("leaves the session usable for the next turn", async () => {
    const { sessionId } = await failedTurn({
      agents: { agent },
      steps: [{ error: { status: 500, message: "x" } }],
    });
    expect((await h.runtime.sessions.get(sessionId)).status).toBe("idle");
    h.script("test", [{ text: "fine now" }]);
    const { turnId } = await h.runtime.sessions.sendTurn(sessionId, { text: "again" });
    expect((await h.runtime.sessions.waitForTurn(sessionId, turnId)).status).toBe("completed");
  });
});
