import type { Runtime } from "@opencomputer/runtime";
import type { ApprovalCard, OneShotBackend, OpenQuestion } from "./backend.ts";

const WAIT_MS = 1000;

/** The one-shot against a runtime in this process (the embedded SQLite store). */
export function embeddedBackend(
  runtime: Pick<Runtime, "sessions" | "approvals">,
  close: () => Promise<void>,
): OneShotBackend {
  return {
    where: "embedded",
    async createSession(agentRef) {
      const { session } = await runtime.sessions.create({ agentId: agentRef, source: "api" });
      return session.id;
    },
    async sendTurn(sessionId, input) {
      return (await runtime.sessions.sendTurn(sessionId, input)).turnId;
    },
    async nextEvents(sessionId, after) {
      const now = await runtime.sessions.events(sessionId, after);
      if (now.length > 0) return now;
      // Subscribe, then read again: a commit between the read and the subscription is not lost.
      let wake!: () => void;
      const woken = new Promise<void>((resolve) => {
        wake = resolve;
      });
      const unsubscribe = runtime.sessions.subscribe(sessionId, () => wake());
      const timer = setTimeout(() => wake(), WAIT_MS);
      try {
        const again = await runtime.sessions.events(sessionId, after);
        if (again.length > 0) return again;
        await woken;
        return await runtime.sessions.events(sessionId, after);
      } finally {
        clearTimeout(timer);
        unsubscribe();
      }
    },
    async session(sessionId) {
      const view = await runtime.sessions.get(sessionId);
      return {
        question: view.question as OpenQuestion | null,
        result: view.result,
        status: view.status,
      };
    },
    async approvals(sessionId) {
      return (await runtime.approvals.list(sessionId)) as unknown as ApprovalCard[];
    },
    async decide(approvalId, decision) {
      return (await runtime.approvals.decide(approvalId, {
        decision,
        decidedBy: "cli",
      })) as unknown as ApprovalCard;
    },
    close,
  };
}
