import type { AgentInput } from "@opencomputer/agent";
import type { EventRecord } from "@opencomputer/runtime";
import { type ApiClient, seg } from "../client.ts";
import type { ApprovalCard, OneShotBackend, OpenQuestion } from "./backend.ts";

const POLL_MS = 200;
const WAIT_MS = 1000;

/**
 * The one-shot against a running server. Events are read with `GET …/events?after=` and polled
 * every 200 ms while there are none: simple, and it resumes from the cursor after any error.
 */
export function httpBackend(api: ApiClient): OneShotBackend {
  return {
    where: api.url,
    async createSession(agentRef) {
      const body = await api.post<{ session: { id: string } }>("/sessions", {
        agentId: agentRef,
        source: "api",
      });
      return body.session.id;
    },
    async sendTurn(sessionId, input: AgentInput) {
      const body = await api.post<{ turnId: string }>(`/sessions/${seg(sessionId)}/turns`, {
        input,
      });
      return body.turnId;
    },
    async nextEvents(sessionId, after) {
      const deadline = Date.now() + WAIT_MS;
      for (;;) {
        const { events } = await api.get<{ events: EventRecord[] }>(
          `/sessions/${seg(sessionId)}/events?after=${after}`,
        );
        if (events.length > 0 || Date.now() >= deadline) return events;
        await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      }
    },
    async session(sessionId) {
      const view = await api.get<{ question: OpenQuestion | null; result: unknown }>(
        `/sessions/${seg(sessionId)}`,
      );
      return { question: view.question, result: view.result };
    },
    async approvals(sessionId) {
      return (await api.get<{ approvals: ApprovalCard[] }>(`/sessions/${seg(sessionId)}/approvals`))
        .approvals;
    },
    async decide(approvalId, decision) {
      return (
        await api.post<{ approval: ApprovalCard }>(`/approvals/${seg(approvalId)}/decision`, {
          decision,
        })
      ).approval;
    },
    async close() {},
  };
}
