// Plays a scenario's steps on a runtime: messages, answers to the open question, decisions on
// pending approvals, each waited on until nothing moves. Every write carries an idempotency key
// derived from the step, so crash mode can run the same driver again on a fresh runtime over the
// same store and it picks up where the killed one left off, never sending a step twice.

import { OpenComputerError } from "@opencomputer/agent";
import type { EventRecord, Runtime } from "@opencomputer/runtime";
import type { ScenarioSpec } from "./scenario.ts";

export interface Observed {
  sessionId: string;
  /** How the last turn settled. */
  status: string;
  events: EventRecord[];
  /** The model's calls, first start of each, in order. */
  toolCalls: Array<{ name: string; callId: string; input: unknown }>;
  /** The final text of the last turn (its last `message.completed`), or "". */
  text: string;
  /** The session's result data, or null. */
  result: unknown;
}

type Api = Pick<Runtime, "sessions" | "approvals">;

const WAIT_MS = 120_000;

export async function driveScenario(runtime: Api, spec: ScenarioSpec): Promise<Observed> {
  const { session } = await runtime.sessions.create({
    agentId: `${spec.agentId}@development`,
    source: "api",
    idempotencyKey: "scenario",
  });
  const id = session.id;
  let lastTurn: string | undefined;
  for (const [i, step] of spec.steps.entries()) {
    const key = `step-${i}`;
    if (step.kind === "send") {
      lastTurn = await send(runtime, id, { source: "user", text: step.text }, key);
    } else if (step.kind === "answer") {
      // The latest question asked (also after a restart, when it may already be answered).
      const asked = (await runtime.sessions.events(id, 0, 500))
        .filter((e) => e.type === "question.asked")
        .at(-1)?.data as { questionId: string } | undefined;
      if (!asked) throw stepError(spec, i, "the agent asked no question to answer");
      const answer = {
        questionId: asked.questionId,
        text: step.text,
        ...(step.value !== undefined ? { value: step.value } : {}),
      };
      lastTurn = await send(runtime, id, { source: "user", answer }, key);
    } else {
      await decideAll(runtime, id, step.decision);
    }
  }
  // Decisions run applies after the last turn; wait for every approval to leave `approved`.
  await settleApprovals(runtime, id);
  return observe(runtime, id, lastTurn);
}

async function send(runtime: Api, id: string, input: unknown, key: string): Promise<string> {
  const { turnId } = await runtime.sessions.sendTurn(id, input, { idempotencyKey: key });
  await runtime.sessions.waitForTurn(id, turnId, { timeoutMs: WAIT_MS });
  return turnId;
}

async function decideAll(runtime: Api, id: string, decision: "approved" | "denied") {
  for (const approval of await runtime.approvals.list(id)) {
    if (approval.status !== "pending") continue;
    await runtime.approvals.decide(approval.id, {
      decision: decision === "approved" ? "approve" : "deny",
      decidedBy: "opencomputer test",
    });
  }
}

async function settleApprovals(runtime: Api, id: string) {
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const busy = (await runtime.approvals.list(id)).some(
      (a) => a.status === "approved" || a.status === "applying",
    );
    if (!busy || Date.now() > deadline) return;
    await new Promise((r) => setTimeout(r, 50));
  }
}

export async function observe(runtime: Api, id: string, lastTurn?: string): Promise<Observed> {
  const events: EventRecord[] = [];
  for (;;) {
    const page = await runtime.sessions.events(id, events.at(-1)?.seq ?? 0, 500);
    events.push(...page);
    if (page.length < 500) break;
  }
  const view = await runtime.sessions.get(id);
  const turnId = lastTurn ?? view.turns.at(-1)?.id;
  const seen = new Set<string>();
  const toolCalls: Observed["toolCalls"] = [];
  let text = "";
  for (const e of events) {
    const data = e.data as { tool?: string; callId?: string; input?: unknown; text?: string };
    if (e.type === "tool.started" && data.callId && !seen.has(data.callId)) {
      seen.add(data.callId);
      toolCalls.push({ name: String(data.tool), callId: data.callId, input: data.input });
    }
    if (e.type === "message.completed" && e.turnId === turnId) text = String(data.text ?? "");
  }
  const turn = view.turns.find((t) => t.id === turnId);
  const result = view.result as { data: unknown } | null;
  return {
    sessionId: id,
    status: turn?.status ?? "none",
    events,
    toolCalls,
    text,
    result: result ? result.data : null,
  };
}

function stepError(spec: ScenarioSpec, index: number, why: string): OpenComputerError {
  return new OpenComputerError(
    "test_step_invalid",
    `${spec.file} "${spec.name}": steps[${index}]: ${why}`,
    {
      path: `steps[${index}]`,
      file: spec.file,
    },
  );
}
