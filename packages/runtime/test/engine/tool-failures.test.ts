// Tool calls that fail, in both execution modes: agents from fixtures/tool-failures-agents.ts;
// whether `strict` ran is read from its marks (fixtures/marks.ts), which either process writes.

import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { clearMarks, marks } from "./fixtures/marks.ts";
import { EXECUTIONS, type Harness, harness, ofType, TEST_WORKERS } from "./harness.ts";

const AGENTS = fileURLToPath(new URL("./fixtures/tool-failures-agents.ts", import.meta.url));

let h: Harness;
const open: Harness[] = [];
const sessions: string[] = [];
afterEach(async () => {
  for (const harness of open.splice(0)) await harness.close();
  for (const id of sessions.splice(0)) clearMarks(id);
});

describe.each(EXECUTIONS)(
  "tool calls that fail go back to the model and the turn continues (%s)",
  (execution) => {
    const start = (steps: Parameters<typeof harness>[0]["steps"]) =>
      harness({ agentsModule: AGENTS, execution, workers: TEST_WORKERS, steps });

    async function oneCall(call: {
      name: string;
      input?: Record<string, unknown>;
      inputText?: string;
    }) {
      h = await start([{ toolCalls: [call] }, { text: "after" }]);
      open.push(h);
      const result = await h.run("go", "agent");
      sessions.push(result.sessionId);
      const failed = ofType(result.events, "tool.failed");
      const turn = (await h.runtime.sessions.get(result.sessionId)).turns[0]!;
      const runs = marks(result.sessionId, "strict.runs").length;
      return { ...result, failed, turn, runs };
    }

    it("a valid call runs the tool once (what the runs counts below rest on)", async () => {
      const { runs, events } = await oneCall({ name: "strict", input: { count: 1 } });
      expect(runs).toBe(1);
      expect(ofType(events, "tool.completed")[0]!.data.output).toEqual({ ok: true });
    });

    it("unknown tool name: fails listing the available tools, nothing runs", async () => {
      const { failed, turn, events } = await oneCall({ name: "nope", input: {} });
      expect(failed[0]!.data.message).toMatch(
        /Unknown tool "nope"\. Available tools: strict, thrower/,
      );
      expect(turn.status).toBe("completed");
      expect(ofType(events, "message.completed").at(-1)!.data.text).toBe("after");
    });

    it("invalid JSON arguments: fails with the raw text, the tool does not run", async () => {
      const { failed, turn, runs } = await oneCall({ name: "strict", inputText: '{"count": 1' });
      expect(failed[0]!.data.message).toContain("not valid JSON");
      expect(failed[0]!.data.message).toContain('{"count": 1');
      expect(runs).toBe(0);
      expect(turn.status).toBe("completed");
    });

    it("input that fails the schema: fails naming the field, the tool does not run", async () => {
      const { failed, runs } = await oneCall({ name: "strict", input: { count: "three" } });
      expect(failed[0]!.data.message).toMatch(
        /Invalid input for strict: input\.count must be integer/,
      );
      expect(runs).toBe(0);
      const extra = await oneCall({ name: "strict", input: { count: 1, extra: true } });
      expect(extra.failed[0]!.data.message).toContain("extra");
      expect(extra.runs).toBe(0);
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
      h = await start([
        { toolCalls: [{ name: "waits_a" }, { name: "waits_b" }] },
        { text: "both done" },
      ]);
      open.push(h);
      const { events } = await h.run("go", "agent");
      expect(
        ofType(events, "tool.completed")
          .map((e) => e.data.output)
          .sort(),
      ).toEqual(["a", "b"]);
    });
  },
);
