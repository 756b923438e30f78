// Session budgets (engine/budget.ts): a step whose usage spends the budget ends its turn
// `budget_exceeded` without running the step's tool calls, everything written stays, and a later
// turn of the spent session fails before its agent is rendered or its model called.

import { defineTool, useTool } from "@opencomputer/agent";
import { createPricer } from "@opencomputer/models";
import { afterEach, describe, expect, it } from "vitest";
import { type Harness, type HarnessOptions, harness, ofType, types } from "./harness.ts";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

let lookups = 0;
const lookup = defineTool({
  name: "lookup",
  description: "Look something up",
  input: { type: "object", properties: {} },
  run: () => {
    lookups += 1;
    return { found: true };
  },
});
const agents = {
  shop: () => {
    useTool(lookup);
    return "Answer the customer.";
  },
};

const call = (usage: { inputTokens: number; outputTokens: number }) => ({
  toolCalls: [{ name: "lookup", input: {} }],
  usage,
});

async function start(options: Partial<HarnessOptions>) {
  lookups = 0;
  h = await harness({ agents, ...options });
  return h;
}

async function turn(h: Harness, sessionId: string, text: string) {
  const { turnId } = await h.runtime.sessions.sendTurn(sessionId, { text });
  const settled = await h.runtime.sessions.waitForTurn(sessionId, turnId, { timeoutMs: 20_000 });
  const events = (await h.events(sessionId)).filter((e) => e.turnId === turnId);
  return { settled, events };
}

describe("session budgets", () => {
  it("ends the turn when a step spends the token budget, and fails the next turn at once", async () => {
    const h = await start({
      steps: [call({ inputTokens: 60, outputTokens: 50 }), { text: "never reached" }],
    });
    const { session } = await h.runtime.sessions.create({
      agentId: "shop",
      budget: { maxTokens: 100 },
    });
    expect(session.budget).toEqual({ maxTokens: 100 });
    const first = await turn(h, session.id, "find it");
    expect(first.settled.status).toBe("failed");
    expect(first.settled.error).toMatchObject({ code: "budget_exceeded" });
    expect(first.settled.error!.message).toContain("110 tokens of its budget of 100");
    // The step is kept (its message and usage); its call is settled, never run.
    expect(types(first.events)).toEqual([
      "message.received",
      "turn.queued",
      "turn.started",
      "agent.rendered",
      "usage.recorded",
      "tool.started",
      "tool.failed",
      "turn.failed",
    ]);
    expect(ofType(first.events, "tool.failed")[0]!.data.settledBy).toBe("turn_failed");
    expect(lookups).toBe(0);

    const second = await turn(h, session.id, "try again");
    expect(second.settled.error).toMatchObject({ code: "budget_exceeded" });
    expect(ofType(second.events, "agent.rendered")).toHaveLength(0);
    expect(ofType(second.events, "usage.recorded")).toHaveLength(0);
    // The session can still be read, and is idle (not failed) for its owner to end.
    expect((await h.runtime.sessions.get(session.id)).status).toBe("idle");
  });

  it("lets a session within its budget run as usual", async () => {
    const h = await start({
      steps: [
        call({ inputTokens: 10, outputTokens: 10 }),
        { text: "done", usage: { inputTokens: 10, outputTokens: 5 } },
      ],
    });
    const { session } = await h.runtime.sessions.create({
      agentId: "shop",
      budget: { maxTokens: 1000, maxCostUsd: 5 },
    });
    const { settled } = await turn(h, session.id, "find it");
    expect(settled.status).toBe("completed");
    expect(lookups).toBe(1);
  });

  it("counts cost across turns against maxCostUsd", async () => {
    const h = await start({
      // $0.001 a token: each step below costs $0.02.
      pricer: createPricer({ "script/test": { inputPerMTok: 1000, outputPerMTok: 1000 } }),
      steps: [
        call({ inputTokens: 10, outputTokens: 10 }),
        { text: "first answer", usage: { inputTokens: 10, outputTokens: 10 } },
        call({ inputTokens: 10, outputTokens: 10 }),
        { text: "never reached" },
      ],
    });
    const { session } = await h.runtime.sessions.create({
      agentId: "shop",
      budget: { maxCostUsd: 0.05 },
    });
    const first = await turn(h, session.id, "one");
    expect(first.settled.status).toBe("completed");
    expect(ofType(first.events, "usage.recorded").map((e) => e.data.costUsd)).toEqual([0.02, 0.02]);
    // A new runtime reads what earlier turns spent from the log.
    const second = await turn(h, session.id, "two");
    expect(second.settled.error).toMatchObject({ code: "budget_exceeded" });
    expect(second.settled.error!.message).toContain("of its budget of $0.05");
    expect(lookups).toBe(1);
  });

  it("treats a step without a price as spending a cost budget, never as free", async () => {
    const h = await start({
      // As for a model missing from the price table (the scripted provider itself is free).
      pricer: () => ({ costUsd: null, pricing: "unknown" }),
      steps: [call({ inputTokens: 1, outputTokens: 1 })],
    });
    const { session } = await h.runtime.sessions.create({
      agentId: "shop",
      budget: { maxCostUsd: 100 },
    });
    const { settled, events } = await turn(h, session.id, "go");
    expect(ofType(events, "usage.recorded")[0]!.data).toMatchObject({ pricing: "unknown" });
    expect(settled.error).toMatchObject({ code: "budget_exceeded" });
    expect(settled.error!.message).toContain("prices.json");
    expect(lookups).toBe(0);
  });

  it("refuses a malformed budget, naming the field", async () => {
    const h = await start({ steps: [] });
    const cases: Array<[unknown, string]> = [
      [{ maxCostUsd: -1 }, "budget.maxCostUsd"],
      [{ maxTokens: 1.5 }, "budget.maxTokens"],
      [{ maxDollars: 1 }, "budget.maxDollars"],
      [{}, "budget"],
      ["10", "budget"],
    ];
    for (const [budget, path] of cases) {
      await expect(
        h.runtime.sessions.create({ agentId: "shop", budget: budget as never }),
      ).rejects.toMatchObject({ code: "invalid_input", details: { path } });
    }
  });

  it("holds every session with a label value to that value's budget for the period", async () => {
    const h = await start({
      steps: [
        { text: "one", usage: { inputTokens: 40, outputTokens: 10 } },
        { text: "two", usage: { inputTokens: 40, outputTokens: 10 } },
      ],
      labelBudgets: {
        budgets: [
          { label: "customer", maxTokens: 80, period: "month" },
          { label: "customer", value: "vip", maxTokens: 1000, period: "month" },
        ],
        now: () => Date.now(),
      },
    });
    const session = async (customer: string) =>
      (await h.runtime.sessions.create({ agentId: "shop", labels: { customer } })).session.id;
    // Two sessions of acme share its 80 tokens: the first spends 50, the second 50 more, then
    // a third turn finds the month's budget spent before calling the model.
    const a = await session("acme");
    expect((await turn(h, a, "hi")).settled.status).toBe("completed");
    const b = await session("acme");
    expect((await turn(h, b, "hi")).settled.status).toBe("completed");
    const third = await turn(h, await session("acme"), "hi");
    expect(third.settled.error).toMatchObject({ code: "budget_exceeded" });
    expect(third.settled.error!.message).toContain(
      "Label customer=acme this month used 100 tokens",
    );
    expect(ofType(third.events, "agent.rendered")).toHaveLength(0);
    // Another value has its own budget; a value with a budget of its own uses that one.
    expect((await turn(h, await session("globex"), "hi")).settled.status).toBe("completed");
    const vip = await session("vip");
    expect((await turn(h, vip, "hi")).settled.status).toBe("completed");
    expect((await turn(h, vip, "again")).settled.status).toBe("completed");
  });
});
