// With agent code in workers, the render after a step's only tool call is made by the worker
// right after the call and comes with it: one round trip fewer per tool step. It must still be
// a render made after the call (so it sees what the call changed), fail the step as that render
// would have, and not be used when calls overlap.
import { fileURLToPath } from "node:url";
import { WorkerProcess } from "@opencomputer/workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { type Harness, harness, ofType, TEST_WORKERS } from "./harness.ts";

const AGENTS = fileURLToPath(new URL("./fixtures/worker-agents.ts", import.meta.url));

let h: Harness;
afterEach(async () => {
  vi.restoreAllMocks();
  await h?.close();
});

const start = (steps: Parameters<typeof harness>[0]["steps"]) =>
  harness({ agentsModule: AGENTS, execution: "worker", workers: TEST_WORKERS, steps });

describe("the render after a tool call, in worker mode", () => {
  it("comes with the call: the turn asks the pool for one render, and still renders twice", async () => {
    h = await start([
      { toolCalls: [{ name: "lookup_order", input: { orderId: "A1" } }] },
      { text: "done" },
    ]);
    await h.run("warm up");
    const renders = vi.spyOn(WorkerProcess.prototype, "render");
    const { events } = await h.run("Where is A1?");
    expect(ofType(events, "agent.rendered")).toHaveLength(2);
    expect(ofType(events, "turn.completed")).toHaveLength(1);
    expect(renders).toHaveBeenCalledTimes(1);
  });

  it("is made after the call, so it selects what the call unlocked", async () => {
    h = await start([
      { toolCalls: [{ name: "unlock", input: {} }] },
      { toolCalls: [{ name: "secret", input: {} }] },
      { text: "done" },
    ]);
    const { events } = await h.run("unlock it", "stateful");
    const rendered = ofType(events, "agent.rendered").map((e) => e.data.enabledTools);
    expect(rendered[0]).not.toContain("secret");
    expect(rendered[1]).toContain("secret");
    expect(ofType(events, "tool.completed").map((e) => e.data.output)).toEqual([
      { unlocked: true },
      { secret: 42 },
    ]);
  });

  it("fails the turn agent_failed when it throws, as the step's own render would", async () => {
    h = await start([{ toolCalls: [{ name: "break_render", input: {} }] }, { text: "never" }]);
    const { events } = await h.run("break it", "stateful");
    expect(ofType(events, "tool.completed")).toHaveLength(1);
    expect(ofType(events, "agent.rendered")).toHaveLength(1);
    expect(ofType(events, "turn.failed")[0]!.data).toMatchObject({
      code: "agent_failed",
      message: "Agent stateful failed to render",
    });
    expect(JSON.stringify(h.logs)).toContain("render broke after the call");
  });

  it("is not used after calls that overlapped: the next step renders on its own", async () => {
    h = await start([
      {
        toolCalls: [
          { name: "lookup_order", input: { orderId: "A1" } },
          { name: "lookup_order", input: { orderId: "B2" } },
        ],
      },
      { text: "done" },
    ]);
    await h.run("warm up");
    const renders = vi.spyOn(WorkerProcess.prototype, "render");
    const { events } = await h.run("Where are A1 and B2?");
    expect(ofType(events, "tool.completed")).toHaveLength(2);
    expect(ofType(events, "agent.rendered")).toHaveLength(2);
    expect(renders).toHaveBeenCalledTimes(2);
  });
});
