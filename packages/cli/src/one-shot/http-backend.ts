import { type AgentInput, OpenComputerError } from "@opencomputer/agent";
import type { SessionEvent, SessionStatus } from "@opencomputer/protocol";
import { type ApiClient, seg } from "../client.ts";
import type { ApprovalCard, OneShotBackend, OpenQuestion } from "./backend.ts";
import { EventFeed, type FeedTransport } from "./event-feed.ts";

/** The pause between polls when the server cannot stream. */
const POLL_MS = 200;
/** How long `nextEvents` waits for events when there are none. */
const WAIT_MS = 1000;

/**
 * The one-shot against a running server. Each session's events come over one Server-Sent Events
 * stream (`GET …/events?after=` with `Accept: text/event-stream`), opened on the first
 * `nextEvents` and reopened from the cursor when it drops; when the server answers without a
 * stream, or while it is down, they are polled every 200 ms as before (see EventFeed).
 */
export function httpBackend(api: ApiClient): OneShotBackend {
  const feeds = new Map<string, EventFeed>();
  let closed = false;
  const feedOf = (sessionId: string, after: number): EventFeed => {
    // A feed opened after close() would keep a connection, and the process, alive.
    if (closed) throw new OpenComputerError("closed", "The one-shot backend is closed");
    let feed = feeds.get(sessionId);
    if (!feed) {
      feed = new EventFeed(eventsRoute(api, sessionId), after, {
        waitMs: WAIT_MS,
        pollMs: POLL_MS,
      });
      feeds.set(sessionId, feed);
    }
    return feed;
  };
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
      return feedOf(sessionId, after).next(after);
    },
    async session(sessionId) {
      const view = await api.get<{
        question: OpenQuestion | null;
        result: unknown;
        status: SessionStatus;
      }>(`/sessions/${seg(sessionId)}`);
      return { question: view.question, result: view.result, status: view.status };
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
    async close() {
      closed = true;
      for (const feed of feeds.values()) feed.close();
      feeds.clear();
    },
  };
}

/** The session's events route, streamed or as JSON pages, with the client's key. */
function eventsRoute(api: ApiClient, sessionId: string): FeedTransport {
  const path = (after: number) => `/sessions/${seg(sessionId)}/events?after=${after}`;
  return {
    open: (after, signal) => api.stream(path(after), signal),
    async poll(after, signal) {
      return (await api.get<{ events: SessionEvent[] }>(path(after), signal)).events;
    },
  };
}
