// The UsageStore contract as tests, run by each store from its own test file on a fresh database
// per test: steps are written as the engine writes them (`usage.recorded` events through the
// Store port), so these also check that each store's trigger fills the roll-up in the same write.
import type { NewEvent, Store, UsageStore } from "@opencomputer/runtime";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createdEvents, sessionRecord } from "./store-conformance/fixtures.ts";

export interface UsageStoreFixture {
  store: Store;
  usage: UsageStore;
  close(): Promise<void>;
}

const FROM = "2000-01-01T00:00:00.000Z";
const TO = "2100-01-01T00:00:00.000Z";

function step(input: number, output: number, costUsd: number | null, cache = 0): NewEvent {
  return {
    type: "usage.recorded",
    data: {
      provider: "anthropic",
      model: "claude-sonnet-4.6",
      inputTokens: input,
      outputTokens: output,
      cacheReadTokens: cache,
      cacheWriteTokens: cache,
      costUsd,
      pricing: costUsd === null ? "unknown" : "table",
    },
  };
}

export function usageStoreConformance(name: string, open: () => Promise<UsageStoreFixture>): void {
  describe(`UsageStore conformance: ${name}`, () => {
    let fixture: UsageStoreFixture;
    let store: Store;
    let usage: UsageStore;
    beforeEach(async () => {
      fixture = await open();
      ({ store, usage } = fixture);
    });
    afterEach(async () => {
      await fixture.close();
    });

    async function session(over: Parameters<typeof sessionRecord>[0]) {
      const s = sessionRecord(over);
      await store.createSession(s, createdEvents(s));
      return s.id;
    }
    const record = (sessionId: string, events: NewEvent[]) =>
      store.apply(sessionId, { ops: [], events });

    it("sums every kind of token, cost and unpriced steps per agent, session and label", async () => {
      const a1 = await session({
        projectId: "p1",
        agentId: "support",
        labels: { customer: "acme" },
      });
      const a2 = await session({
        projectId: "p1",
        agentId: "support",
        labels: { customer: "globex" },
      });
      const b1 = await session({ projectId: "p1", agentId: "billing", labels: {} });
      const other = await session({
        projectId: "p2",
        agentId: "support",
        labels: { customer: "acme" },
      });
      await record(a1, [step(100, 10, 0.25, 5), step(200, 20, 0.5)]);
      await record(a2, [step(1000, 100, null)]);
      // Other events in the same write are not steps.
      await record(b1, [
        { type: "message.completed", data: { messageId: "m", text: "hi" } },
        step(1, 2, 0.125),
      ]);
      await record(other, [step(7, 7, 7)]);

      const total = await usage.rollUp({ projectId: "p1", from: FROM, to: TO });
      expect(total.groups).toEqual([]);
      expect(total.total).toEqual({
        steps: 4,
        inputTokens: 1301,
        outputTokens: 132,
        cacheReadTokens: 5,
        cacheWriteTokens: 5,
        costUsd: 0.875,
        unpricedSteps: 1,
      });

      const byAgent = await usage.rollUp({
        projectId: "p1",
        from: FROM,
        to: TO,
        groupBy: { by: "agent" },
      });
      expect(byAgent.total).toEqual(total.total);
      expect(byAgent.groups.map((g) => [g.key, g.steps, g.costUsd, g.unpricedSteps])).toEqual([
        ["billing", 1, 0.125, 0],
        ["support", 3, 0.75, 1],
      ]);

      const bySession = await usage.rollUp({
        projectId: "p1",
        from: FROM,
        to: TO,
        groupBy: { by: "session" },
      });
      expect(bySession.groups.map((g) => g.key)).toEqual([a1, a2, b1].sort());
      expect(bySession.groups.find((g) => g.key === a1)).toMatchObject({
        steps: 2,
        inputTokens: 300,
        outputTokens: 30,
        cacheReadTokens: 5,
      });

      const byCustomer = await usage.rollUp({
        projectId: "p1",
        from: FROM,
        to: TO,
        groupBy: { by: "label", key: "customer" },
      });
      // Sessions without the label are one group, `null`, listed last.
      expect(byCustomer.groups.map((g) => [g.key, g.steps, g.inputTokens])).toEqual([
        ["acme", 2, 300],
        ["globex", 1, 1000],
        [null, 1, 1],
      ]);

      // One label value's steps only (what label budgets read).
      const acme = await usage.rollUp({
        projectId: "p1",
        from: FROM,
        to: TO,
        label: { key: "customer", value: "acme" },
      });
      expect(acme.total).toMatchObject({ steps: 2, inputTokens: 300, costUsd: 0.75 });
    });

    it("counts steps recorded from `from` up to, not including, `to`", async () => {
      const id = await session({ projectId: "p1" });
      const [first] = await record(id, [step(1, 1, 0.01)]);
      // Distinct timestamps for the two writes (the store stamps them with its clock).
      while (new Date().toISOString() <= first!.timestamp)
        await new Promise((r) => setTimeout(r, 2));
      const [second] = await record(id, [step(10, 10, 0.1)]);
      expect(second!.timestamp > first!.timestamp).toBe(true);
      const within = (from: string, to: string) =>
        usage.rollUp({ projectId: "p1", from, to }).then((r) => r.total.inputTokens);
      expect(await within(FROM, TO)).toBe(11);
      expect(await within(first!.timestamp, second!.timestamp)).toBe(1);
      expect(await within(second!.timestamp, TO)).toBe(10);
      expect(await within(FROM, first!.timestamp)).toBe(0);
    });

    it("answers zeros for a project or window with no steps", async () => {
      const report = await usage.rollUp({
        projectId: "nobody",
        from: FROM,
        to: TO,
        groupBy: { by: "agent" },
      });
      expect(report).toEqual({
        total: {
          steps: 0,
          inputTokens: 0,
          outputTokens: 0,
          cacheReadTokens: 0,
          cacheWriteTokens: 0,
          costUsd: 0,
          unpricedSteps: 0,
        },
        groups: [],
      });
    });

    it("reads steps written before cost existed as unpriced", async () => {
      const id = await session({ projectId: "p1", labels: { "team.name": "core" } });
      await record(id, [
        {
          type: "usage.recorded",
          data: { provider: "openai", model: "gpt-4o", inputTokens: 3, outputTokens: 4 },
        },
      ]);
      const report = await usage.rollUp({
        projectId: "p1",
        from: FROM,
        to: TO,
        groupBy: { by: "label", key: "team.name" },
      });
      expect(report.groups).toEqual([
        {
          key: "core",
          steps: 1,
          inputTokens: 3,
          outputTokens: 4,
          cacheReadTokens: 0,
          cacheWriteTokens: 0,
          costUsd: 0,
          unpricedSteps: 1,
        },
      ]);
    });
  });
}
