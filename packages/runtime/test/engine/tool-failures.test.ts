import { defineTool, useModel, useTool } from "@opencomputer/agent";
import { afterEach, describe, expect, it } from "vitest";
import { type Harness, harness, ofType } from "./harness.ts";

let runs = 0;
const strict = defineTool({
  name: "strict",
  description: "Takes a count",
  input: {
    type: "object",
    properties: { count: { type: "integer" } },
    required: ["count"],
    additionalProperties: false,
  },
  run: () => {
    runs++;
    return { ok: true };
  },
});
const thrower = defineTool({
  name: "thrower",
  description: "Always fails",
  run: () => {
    throw new Error("the upstream said no");
  },
});
const bigint = defineTool({
  name: "bigint",
  description: "Returns junk",
  run: () => ({ items: [{ price: 10n }] }),
});
const cyclic = defineTool({
  name: "cyclic",
  description: "Returns a cycle",
  run: () => {
    const a: Record<string, unknown> = {};
    a.self = a;
    return a;
  },
});
const badProgress = defineTool({
  name: "bad_progress",
  description: "Reports a Date",
  async run({ reportProgress }) {
    await reportProgress({ at: new Date() }).catch(() => {});
    return { fine: true };
  },
});
const nothing = defineTool({
  name: "nothing",
  description: "Returns undefined",
  run: () => undefined,
});
const huge = defineTool({
  name: "huge",
  description: "Returns too much",
  run: () => ({ blob: "x".repeat(1024 * 1024 + 10) }),
});

let release: () => void = () => {};
const both: string[] = [];
const barrier = new Promise<void>((r) => {
  release = r;
});
const waitsA = defineTool({
  name: "waits_a",
  description: "Waits for b",
  async run() {
    both.push("a");
    if (both.length === 2) release();
    await barrier;
    return "a";
  },
});
const waitsB = defineTool({
  name: "waits_b",
  description: "Waits for a",
  async run() {
    both.push("b");
    if (both.length === 2) release();
    await barrier;
    return "b";
  },
});

function agent() {
  useModel("script/test");
  for (const t of [strict, thrower, bigint, cyclic, badProgress, nothing, huge, waitsA, waitsB])
    useTool(t);
  return "Test tools.";
}

let h: Harness;
afterEach(async () => {
  runs = 0;
  await h?.close();
});

async function oneCall(call: {
  name: string;
  input?: Record<string, unknown>;
  inputText?: string;
}) {
  h = await harness({ agents: { agent }, steps: [{ toolCalls: [call] }, { text: "after" }] });
  const result = await h.run("go");
  const failed = ofType(result.events, "tool.failed");
  const turn = (await h.runtime.sessions.get(result.sessionId)).turns[0]!;
  return { ...result, failed, turn };
}

describe("tool calls that fail go back to the model and the turn continues", () => {
  it("unknown tool name: fails listing the available tools, nothing runs", async () => {
    const { failed, turn, events } = await oneCall({ name: "nope", input: {} });
    expect(failed[0]!.data.message).toMatch(
      /Unknown tool "nope"\. Available tools: strict, thrower/,
    );
    expect(turn.status).toBe("completed");
    expect(ofType(events, "message.completed").at(-1)!.data.text).toBe("after");
  });

  it("invalid JSON arguments: fails with the raw text, the tool does not run", async () => {
    const { failed, turn } = await oneCall({ name: "strict", inputText: '{"count": 1' });
    expect(failed[0]!.data.message).toContain("not valid JSON");
    expect(failed[0]!.data.message).toContain('{"count": 1');
    expect(runs).toBe(0);
    expect(turn.status).toBe("completed");
  });

  it("input that fails the schema: fails naming the field, the tool does not run", async () => {
    const { failed } = await oneCall({ name: "strict", input: { count: "three" } });
    expect(failed[0]!.data.message).toMatch(
      /Invalid input for strict: input\.count must be integer/,
    );
    expect(runs).toBe(0);
    const extra = await oneCall({ name: "strict", input: { count: 1, extra: true } });
    expect(extra.failed[0]!.data.message).toContain("extra");
  });

  it("a thrown error: tool.failed with its message, which the model sees next step", async () => {
    const { failed, sessionId, turn } = await oneCall({ name: "thrower" });
    expect(failed[0]!.data.message).toBe("the upstream said no");
    expect(turn.status).toBe("completed");
    const calls = await h.store.listToolCalls(sessionId);
    expect(calls[0]).toMatchObject({ status: "failed", error: "the upstream said no" });
  });

  it("an output with a BigInt fails naming the JSON path", async () => {
    const { failed } = await oneCall({ name: "bigint" });
    expect(failed[0]!.data.message).toContain("$.items[0].price");
    expect(failed[0]!.data.message).toMatch(/BigInt/);
  });

  it("a cyclic output fails saying so", async () => {
    const { failed } = await oneCall({ name: "cyclic" });
    expect(failed[0]!.data.message).toMatch(/cycl/i);
    expect(failed[0]!.data.message).toContain("$.self");
  });

  it("progress metadata that is not JSON-compatible fails the call with the path", async () => {
    const { failed, events } = await oneCall({ name: "bad_progress" });
    expect(failed[0]!.data.message).toContain("$.at");
    expect(ofType(events, "tool.progress")).toHaveLength(0);
    expect(ofType(events, "tool.completed")).toHaveLength(0);
  });

  it("a tool returning undefined completes with null", async () => {
    const { events } = await oneCall({ name: "nothing" });
    expect(ofType(events, "tool.completed")[0]!.data.output).toBeNull();
  });

  it("an oversized output fails instead of flooding the log", async () => {
    const { failed } = await oneCall({ name: "huge" });
    expect(failed[0]!.data.message).toMatch(/the limit is 1048576/);
  });

  it("parallel calls in one model step run concurrently", async () => {
    h = await harness({
      agents: { agent },
      steps: [{ toolCalls: [{ name: "waits_a" }, { name: "waits_b" }] }, { text: "both done" }],
    });
    const { events } = await h.run("go");
    expect(
      ofType(events, "tool.completed")
        .map((e) => e.data.output)
        .sort(),
    ).toEqual(["a", "b"]);
  });
});
