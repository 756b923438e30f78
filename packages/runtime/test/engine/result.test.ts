// The session result in both execution modes: the agent is in fixtures/result-agents.ts.

import { fileURLToPath } from "node:url";
import type { ScriptStep } from "@opencomputer/models";
import type { Store, WriteBatch } from "@opencomputer/runtime";
import { afterEach, describe, expect, it } from "vitest";
import { jsonDigest } from "../../src/digest.ts";
import { reportSchema } from "./fixtures/result-agents.ts";
import {
  EXECUTIONS,
  type Harness,
  type HarnessOptions,
  harness,
  ofType,
  TEST_WORKERS,
} from "./harness.ts";

const AGENTS = fileURLToPath(new URL("./fixtures/result-agents.ts", import.meta.url));

const call = (input: Record<string, unknown>): ScriptStep => ({
  toolCalls: [{ name: "report", input }],
});

let h: Harness;
afterEach(async () => {
  await h?.close();
});

describe.each(EXECUTIONS)("the session result (%s)", (execution) => {
  const start = (options: HarnessOptions) =>
    harness({ agentsModule: AGENTS, execution, workers: TEST_WORKERS, ...options });

  it("commits a valid value as session.result with tool.completed result: true", async () => {
    h = await start({
      steps: [call({ url: "https://a.example", status: 200 }), { text: "done" }],
    });
    const { sessionId, turnId, events } = await h.run("check");
    const completed = ofType(events, "tool.completed")[0]!;
    expect(completed.data.result).toBe(true);
    const session = await h.runtime.sessions.get(sessionId);
    expect(session.result).toEqual({
      turnId,
      callId: completed.data.callId,
      reportedAt: expect.any(String),
      data: { url: "https://a.example", status: 200 },
    });
    const { results } = await h.runtime.sessions.results(sessionId);
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({
      agentId: "agent",
      sessionId,
      turnId,
      toolCallId: completed.data.callId,
      resultTool: "report",
      schemaDigest: jsonDigest(reportSchema),
      dataDigest: jsonDigest({ url: "https://a.example", status: 200 }),
      data: { url: "https://a.example", status: 200 },
    });
    expect(results[0]!.schemaDigest).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(await h.runtime.sessions.result(sessionId, results[0]!.resultId)).toEqual(results[0]);
  });

  it("commits the result before the model is told the call succeeded", async () => {
    let seenAtStep2: unknown = "not called";
    let steps = 0;
    h = await start({
      model: "probe/x",
      providers: {
        probe: () => ({
          specificationVersion: "v3",
          provider: "probe",
          modelId: "probe/x",
          supportedUrls: {},
          async doStream(options) {
            // The engine streams; this model answers with one generate result as a stream.
            const result = await this.doGenerate(options);
            const parts = [
              ...result.content.map((part) =>
                part.type === "text"
                  ? { type: "text-delta" as const, id: "t", delta: part.text }
                  : part,
              ),
              { type: "finish" as const, usage: result.usage, finishReason: result.finishReason },
            ];
            return {
              stream: new ReadableStream({
                start(controller) {
                  for (const part of parts) controller.enqueue(part as never);
                  controller.close();
                },
              }),
            };
          },
          async doGenerate(options) {
            steps++;
            if (steps === 1) {
              return {
                content: [
                  {
                    type: "tool-call",
                    toolCallId: "t1",
                    toolName: "report",
                    input: '{"url":"u","status":1}',
                  },
                ],
                finishReason: { unified: "tool-calls", raw: undefined },
                usage: usage(),
                warnings: [],
              };
            }
            const sessionId = (await h.store.listSessions({ limit: 1 }))[0]!.id;
            const toolMessage = options.prompt.find((m) => m.role === "tool");
            seenAtStep2 = {
              result: (await h.store.getSession(sessionId))!.result?.data,
              toolMessage,
            };
            return {
              content: [{ type: "text", text: "ok" }],
              finishReason: { unified: "stop", raw: undefined },
              usage: usage(),
              warnings: [],
            };
          },
        }),
      },
    });
    await h.run("go");
    expect(seenAtStep2).toMatchObject({
      result: { url: "u", status: 1 },
      toolMessage: {
        content: [
          { type: "tool-result", output: { type: "json", value: { url: "u", status: 1 } } },
        ],
      },
    });
  });

  it("a value that fails the output schema fails the call; the previous result stands", async () => {
    h = await start({
      steps: [
        call({ url: "u1", status: 200 }),
        call({ url: "u2", status: "ok" }),
        call({ url: "u3", status: 1, extra: 1 }),
        { text: "x" },
      ],
    });
    const { sessionId, events } = await h.run("go");
    const failed = ofType(events, "tool.failed");
    expect(failed).toHaveLength(2);
    expect(failed[0]!.data.message).toMatch(/\$\.status must be integer.*previous result stands/);
    expect(failed[1]!.data.message).toMatch(/must NOT have additional properties \(extra\)/);
    expect((await h.runtime.sessions.get(sessionId)).result!.data).toEqual({
      url: "u1",
      status: 200,
    });
    expect((await h.runtime.sessions.results(sessionId)).results).toHaveLength(1);
  });

  it("a value over 8 KiB of JSON fails; exactly 8 KiB is accepted", async () => {
    // {"url":"","status":1,"note":"…"} is 31 bytes plus the note.
    const exact = { url: "", status: 1, note: "n".repeat(8192 - 31) };
    const over = { url: "", status: 1, note: "é".repeat(4081) };
    expect(Buffer.byteLength(JSON.stringify(exact))).toBe(8192);
    expect(JSON.stringify(over).length).toBeLessThan(8192);
    h = await start({ steps: [call(exact), call(over), { text: "x" }] });
    const { sessionId, events } = await h.run("go");
    expect(ofType(events, "tool.completed")).toHaveLength(1);
    expect(ofType(events, "tool.failed")[0]!.data.message).toMatch(
      /8193 bytes of JSON; a result may be at most 8192 bytes/,
    );
    expect((await h.runtime.sessions.get(sessionId)).result!.data).toEqual(exact);
  });

  it("a later call replaces the whole value and the log keeps every call", async () => {
    h = await start({
      steps: [
        call({ url: "a", status: 1, note: "first" }),
        call({ url: "b", status: 2 }),
        { text: "x" },
      ],
    });
    const { sessionId, events } = await h.run("go");
    expect((await h.runtime.sessions.get(sessionId)).result!.data).toEqual({ url: "b", status: 2 });
    expect(ofType(events, "tool.completed").map((e) => e.data.output)).toEqual([
      { url: "a", status: 1, note: "first" },
      { url: "b", status: 2 },
    ]);
    expect((await h.runtime.sessions.results(sessionId)).results.map((r) => r.data)).toEqual([
      { url: "a", status: 1, note: "first" },
      { url: "b", status: 2 },
    ]);
  });

  it("a later turn that fails does not clear the result", async () => {
    h = await start({
      steps: [
        call({ url: "a", status: 1 }),
        { text: "x" },
        { error: { status: 400, message: "bad" } },
      ],
    });
    const { sessionId, turnId } = await h.run("go");
    const { turnId: second } = await h.runtime.sessions.sendTurn(sessionId, { text: "again" });
    const settled = await h.runtime.sessions.waitForTurn(sessionId, second);
    expect(settled.status).toBe("failed");
    const session = await h.runtime.sessions.get(sessionId);
    expect(session.result).toMatchObject({ turnId, data: { url: "a", status: 1 } });
  });

  it("retries a commit whose acknowledgement was lost and keeps the one saved record", async () => {
    let lost = 0;
    h = await start({
      steps: [call({ url: "a", status: 1 }), { text: "x" }],
      wrapStore: (real) =>
        Object.assign(Object.create(real) as Store, {
          async apply(sessionId: string, batch: WriteBatch) {
            const events = await real.apply(sessionId, batch);
            if (lost === 0 && batch.ops.some((op) => op.type === "result.insert")) {
              lost++;
              throw new Error("connection reset after commit");
            }
            return events;
          },
        }),
    });
    const { sessionId, events } = await h.run("go");
    expect(lost).toBe(1);
    expect(ofType(events, "tool.completed")).toHaveLength(1);
    expect(ofType(events, "tool.failed")).toHaveLength(0);
    expect((await h.runtime.sessions.results(sessionId)).results).toHaveLength(1);
    expect((await h.runtime.sessions.get(sessionId)).result!.data).toEqual({ url: "a", status: 1 });
    expect((await h.store.getTurn(sessionId, events[1]!.turnId!))!.status).toBe("completed");
  });

  it("pages result records oldest first", async () => {
    h = await start({
      steps: [1, 2, 3].map((n) => call({ url: `u${n}`, status: n })).concat([{ text: "x" }]),
    });
    const { sessionId } = await h.run("go");
    const first = await h.runtime.sessions.results(sessionId, { limit: 2 });
    expect(first.results.map((r) => r.data)).toEqual([
      { url: "u1", status: 1 },
      { url: "u2", status: 2 },
    ]);
    const rest = await h.runtime.sessions.results(sessionId, {
      limit: 2,
      cursor: first.nextCursor!,
    });
    expect(rest.results.map((r) => r.data)).toEqual([{ url: "u3", status: 3 }]);
    expect(rest.nextCursor).toBeNull();
  });
});

function usage() {
  return {
    inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
    outputTokens: { total: 1, text: 1, reasoning: 0 },
  };
}
