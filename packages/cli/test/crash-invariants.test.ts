// The crash-mode checker on hand-made store contents: each broken promise is reported, and a
// repeated write is blamed on its tool only when it lacks the call's (or decision's) key.
import type { Store } from "@opencomputer/runtime";
import { describe, expect, it } from "vitest";
import { checkCrashRun, type EgressLine } from "../src/testing/crash/invariants.ts";

type Loose = Record<string, unknown>;

function store(parts: {
  events: Loose[];
  calls: Loose[];
  results?: Loose[];
  approvals?: Loose[];
}): Store {
  return {
    readEvents: async () => parts.events,
    listToolCalls: async () => parts.calls,
    listResults: async () => parts.results ?? [],
    listApprovals: async () => parts.approvals ?? [],
  } as unknown as Store;
}

const ev = (type: string, callId: string, extra: Loose = {}) => ({
  type,
  data: { callId, ...extra },
});
const call = (callId: string, tool: string, input: unknown) => ({ callId, tool, input });
const line = (execution: string, extra: Partial<EgressLine>): EgressLine => ({
  execution,
  sessionId: "ses_1",
  callId: "call_a",
  phase: "run",
  connectionId: "ledger",
  method: "POST",
  path: "/entries",
  idempotencyKey: null,
  ...extra,
});

describe("checkCrashRun", () => {
  it("passes a clean run", async () => {
    const s = store({
      events: [
        ev("tool.started", "call_a"),
        ev("tool.started", "call_a"),
        ev("tool.completed", "call_a"),
      ],
      calls: [call("call_a", "post", { n: 1 })],
    });
    const out = await checkCrashRun(s, "ses_1", [], ['post {"n":1}']);
    expect(out).toEqual({ violations: [], repeated: [] });
  });

  it("reports two outcomes, a start after completion, a new call id, an unknown caller, a double apply", async () => {
    const s = store({
      events: [
        ev("tool.started", "call_a"),
        ev("tool.completed", "call_a"),
        ev("tool.started", "call_a"),
        ev("tool.completed", "call_a"),
        ev("tool.started", "call_b"),
        ev("tool.failed", "call_b"),
        { type: "approval.applied", data: { approvalId: "apr_1" } },
        { type: "approval.applied", data: { approvalId: "apr_1" } },
      ],
      calls: [call("call_a", "post", { n: 1 }), call("call_b", "post", { n: 1 })],
      results: [{ toolCallId: "call_a" }, { toolCallId: "call_a" }],
      approvals: [{ id: "apr_1", attempts: 2 }],
    });
    const { violations } = await checkCrashRun(
      s,
      "ses_1",
      [line("x", { callId: "call_zz" })],
      ['post {"n":1}'],
    );
    expect(violations).toEqual([
      "call call_a has 2 outcomes (expected exactly 1)",
      "call call_a was started again after it completed",
      "two result records share a tool call",
      "the calls differ from a run without kills (a call re-executed under a new id?): 2 calls, expected 1",
      "an execution of unknown call call_zz called out (POST /entries)",
      "approval apr_1 was applied 2 times",
      "approval apr_1 has 2 approval.applied events",
    ]);
  });

  it("blames a write repeated across executions without the call's key, not one with it", async () => {
    const s = store({
      events: [ev("tool.started", "call_a"), ev("tool.completed", "call_a")],
      calls: [call("call_a", "post", {}), call("call_k", "keyed", {}), call("call_p", "pay", {})],
    });
    const egress = [
      line("e1", {}),
      line("e2", {}),
      line("e3", { callId: "call_k", idempotencyKey: "ses_1:call_k" }),
      line("e4", { callId: "call_k", idempotencyKey: "ses_1:call_k" }),
      // Twice in one execution: the tool's own choice, not a re-run.
      line("e5", { callId: "call_p" }),
      line("e5", { callId: "call_p" }),
      // An apply keyed by the call id rather than the decision's id.
      line("e6", {
        callId: "call_p",
        phase: "apply",
        decisionId: "dec_1",
        idempotencyKey: "call_p",
      }),
      line("e7", {
        callId: "call_p",
        phase: "apply",
        decisionId: "dec_1",
        idempotencyKey: "call_p",
      }),
      // Reads may repeat.
      line("e8", { callId: "call_k", method: "GET" }),
      line("e9", { callId: "call_k", method: "GET" }),
    ];
    const { repeated } = await checkCrashRun(s, "ses_1", egress, []);
    expect(repeated).toEqual([
      {
        tool: "post",
        callId: "call_a",
        phase: "run",
        request: "POST ledger /entries",
        times: 2,
        idempotencyKeys: [null, null],
      },
      {
        tool: "pay",
        callId: "call_p",
        phase: "apply",
        request: "POST ledger /entries",
        times: 2,
        idempotencyKeys: ["call_p", "call_p"],
      },
    ]);
  });
});
