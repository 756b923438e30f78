// Tools that wait for a person, in both execution modes: the agent is in
// fixtures/approvals-agents.ts. Its preview and apply log to files in the harness's dir, and
// read there how to behave (`mode`, `facts`), so the test sees them in either process.

import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { EXECUTIONS, type Harness, harness, ofType, TEST_WORKERS, until } from "./harness.ts";

const AGENTS = fileURLToPath(new URL("./fixtures/approvals-agents.ts", import.meta.url));

let h: Harness;
afterEach(async () => {
  await h?.close();
});

const lines = (name: string) =>
  existsSync(join(h.dir, name))
    ? readFileSync(join(h.dir, name), "utf8").split("\n").slice(0, -1)
    : [];
/** Each apply's arguments, in call order. */
const applied = () =>
  lines("applied").map(
    (l) => JSON.parse(l) as { input: Record<string, unknown>; decision: unknown },
  );
const previews = () => lines("previews").length;
/** How the next apply behaves. */
const setMode = (mode: "ok" | "throw" | "hang" | "response") =>
  writeFileSync(join(h.dir, "mode"), mode);

describe.each(EXECUTIONS)("tools that wait for a person (%s)", (execution) => {
  async function proposed(
    options: {
      source?: "api" | "playground";
      applyTimeoutMs?: number;
      cardFacts?: number;
      mode?: "throw" | "response";
    } = {},
  ) {
    h = await harness({
      agentsModule: AGENTS,
      execution,
      workers: TEST_WORKERS,
      ...(options.applyTimeoutMs ? { applyTimeoutMs: options.applyTimeoutMs } : {}),
    });
    const input = { customerId: "c1", planId: "pro", dir: h.dir };
    h.script("test", [
      { toolCalls: [{ name: "attach", input }] },
      { text: "I recorded the change for your approval." },
    ]);
    if (options.cardFacts) writeFileSync(join(h.dir, "facts"), String(options.cardFacts));
    if (options.mode) setMode(options.mode);
    const { session } = await h.runtime.sessions.create({
      agentId: "agent",
      source: options.source ?? "api",
    });
    const { turnId } = await h.runtime.sessions.sendTurn(session.id, { text: "Move c1 to pro" });
    await h.runtime.sessions.waitForTurn(session.id, turnId);
    const events = await h.events(session.id);
    const approvals = await h.runtime.approvals.list(session.id);
    return { sessionId: session.id, events, approval: approvals[0], input };
  }

  it("turn the model's call into a pending approval with the exact card; nothing is applied", async () => {
    const { events, approval, input } = await proposed();
    expect(previews()).toBe(1);
    expect(applied()).toHaveLength(0);
    expect(approval).toMatchObject({
      status: "pending",
      tool: "attach",
      input,
      card: { title: "Move c1 to pro", facts: [{ label: "Fact 0", value: "x" }] },
      digest: expect.stringMatching(/^sha256:/),
    });
    const completed = ofType(events, "tool.completed")[0]!;
    expect(completed.data.output).toMatchObject({ approvalId: approval!.id, status: "pending" });
    expect(String((completed.data.output as { message: string }).message)).toMatch(
      /recorded for approval/,
    );
    expect(ofType(events, "approval.requested")[0]!.data).toMatchObject({
      approvalId: approval!.id,
      card: approval!.card,
    });
  });

  it("apply runs once, with the card's arguments and the decision, even after the session ended", async () => {
    const { sessionId, approval, input } = await proposed();
    await h.runtime.sessions.end(sessionId);
    const done = await h.runtime.approvals.decide(approval!.id, {
      decision: "approve",
      decidedBy: "ana",
    });
    expect(done.status).toBe("applied");
    expect(applied()).toEqual([
      {
        input,
        decision: { id: done.decision!.id, decidedAt: expect.any(String), decidedBy: "ana" },
      },
    ]);
    expect(done.outcome).toEqual({ subscription: "sub_c1", idempotencyKey: done.decision!.id });
    const types = ofType(await h.events(sessionId), "approval.applied");
    expect(types).toHaveLength(1);
  });

  it("two approvals racing apply once; a decision on a decided approval is refused", async () => {
    const { approval } = await proposed();
    const results = await Promise.allSettled([
      h.runtime.approvals.decide(approval!.id, { decision: "approve" }),
      h.runtime.approvals.decide(approval!.id, { decision: "approve" }),
      h.runtime.approvals.decide(approval!.id, { decision: "deny" }),
    ]);
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    expect(
      results
        .filter((r) => r.status === "rejected")
        .map((r) => (r as PromiseRejectedResult).reason.code),
    ).toEqual(["approval_decided", "approval_decided"]);
    await until(() => applied().length > 0);
    await new Promise((r) => setTimeout(r, 20));
    expect(applied()).toHaveLength(1);
  });

  it("deny applies nothing", async () => {
    const { approval } = await proposed();
    const denied = await h.runtime.approvals.decide(approval!.id, { decision: "deny" });
    expect(denied.status).toBe("denied");
    expect(applied()).toHaveLength(0);
    await expect(
      h.runtime.approvals.decide(approval!.id, { decision: "maybe" }),
    ).rejects.toMatchObject({
      details: { path: "decision" },
    });
  });

  it("an apply that throws is failed with its message", async () => {
    const { approval } = await proposed({ mode: "throw" });
    const failed = await h.runtime.approvals.decide(approval!.id, { decision: "approve" });
    expect(failed).toMatchObject({ status: "failed", error: "billing said no" });
  });

  it("an apply that returns a Response has applied: its description is recorded, with a warning", async () => {
    const { approval, sessionId } = await proposed({ mode: "response" });
    const applied = await h.runtime.approvals.decide(approval!.id, { decision: "approve" });
    expect(applied).toMatchObject({
      status: "applied",
      error: null,
      outcome: { notJson: "a Response", status: 201, statusText: "Created", ok: true },
    });
    const events = await h.events(sessionId);
    const [warning] = ofType(events, "approval.warning");
    expect(warning?.data).toMatchObject({ approvalId: approval!.id, code: "outcome_not_json" });
    expect(warning?.data.message).toContain("not JSON-compatible");
    expect(ofType(events, "approval.failed")).toHaveLength(0);
    // The warning comes first, so a reader that stops at `applied` has seen it.
    const types = events.map((e) => e.type);
    expect(types.indexOf("approval.warning")).toBe(types.indexOf("approval.applied") - 1);
    expect(applied.attempts).toBe(1);
  });

  it("an apply that does not settle in time is unconfirmed; a retry passes the same decision.id; or it is dismissed", async () => {
    const { approval } = await proposed({ applyTimeoutMs: 50 });
    setMode("hang");
    const unconfirmed = await h.runtime.approvals.decide(approval!.id, { decision: "approve" });
    expect(unconfirmed.status).toBe("unconfirmed");
    setMode("ok");
    const retried = await h.runtime.approvals.retry(approval!.id);
    expect(retried.status).toBe("applied");
    expect(applied()).toHaveLength(2);
    expect((applied()[0]!.decision as { id: string }).id).toBe(
      (applied()[1]!.decision as { id: string }).id,
    );
    await expect(h.runtime.approvals.dismiss(approval!.id)).rejects.toMatchObject({
      code: "approval_state",
    });
  });

  it("survives a restart while pending, and an apply left running by a dead runtime becomes unconfirmed, never re-run", async () => {
    const { approval } = await proposed();
    // A new runtime on the same store sees the pending approval and can approve it.
    await h.runtime.close();
    const second = h.newRuntime({ applyTimeoutMs: 30, leaseMs: 30 });
    await second.start();
    setMode("hang");
    void second.approvals.decide(approval!.id, { decision: "approve" }).catch(() => {});
    await until(() => applied().length === 1);
    // That runtime dies mid-apply: a third one marks the apply unconfirmed and does not run it.
    await second.close();
    const third = h.newRuntime({ applyTimeoutMs: 30, leaseMs: 30 });
    await new Promise((r) => setTimeout(r, 80));
    await third.start();
    await until(async () => (await third.approvals.get(approval!.id)).status === "unconfirmed");
    await new Promise((r) => setTimeout(r, 50));
    expect(applied()).toHaveLength(1);
  });

  it("fails the call when nobody is there to ask", async () => {
    const { events, approval } = await proposed({ source: "playground" });
    expect(approval).toBeUndefined();
    expect(ofType(events, "tool.failed")[0]!.data.message).toMatch(/has nobody to ask/);
  });

  it("refuses a card with more than 20 facts", async () => {
    const { events, approval } = await proposed({ cardFacts: 21 });
    expect(approval).toBeUndefined();
    expect(ofType(events, "tool.failed")[0]!.data.message).toMatch(/at most 20 facts/);
  });
});
