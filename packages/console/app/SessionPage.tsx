import { useAgent, waitingFor } from "@opencomputer/react";
import { useEffect, useRef, useState } from "react";
import { Composer } from "./Composer.tsx";
import { ComputerPanel } from "./ComputerPanel.tsx";
import { basePath, useConnection } from "./connection.tsx";
import { EndSession } from "./EndSession.tsx";
import { ago, clock, pretty } from "./format.ts";
import { LabelsPanel } from "./LabelsPanel.tsx";
import { QuestionBox } from "./QuestionBox.tsx";
import { RendersPanel } from "./RendersPanel.tsx";
import { RequestsPanel } from "./RequestsPanel.tsx";
import { StatusBadge } from "./StatusBadge.tsx";
import { Timeline } from "./Timeline.tsx";
import { usePageTitle } from "./title.ts";
import { UsagePanel } from "./UsagePanel.tsx";

function waitingText(waiting: "answer" | "approval", approvals: number): string {
  if (waiting === "answer")
    return "The agent asked a question and is waiting for your answer below.";
  return approvals > 1
    ? `${approvals} approvals are waiting for your decision below.`
    : "An approval is waiting for your decision below.";
}

/** One session: its conversation, open question, approvals and computer, followed live. */
export function SessionPage({ id }: { id: string }) {
  const { headers } = useConnection();
  const agent = useAgent({ sessionId: id, basePath, headers });
  const { session, error } = agent;
  const status = session?.status ?? agent.status;
  const ended = status === "ended";
  const waiting = ended ? null : waitingFor(agent);
  // Labels as the last PATCH answered them, until the session is read again.
  const [patched, setPatched] = useState<{ revision?: number; labels: Record<string, string> }>();
  const shownLabels =
    patched && patched.revision === session?.revision ? patched.labels : (session?.labels ?? {});
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), []);
  const name = session?.agentId ?? "Session";
  usePageTitle(waiting ? `Waiting for you · ${name}` : name);

  return (
    <section className="session" aria-labelledby="session-title">
      <div className="page-head">
        <div>
          <a href="#/" className="muted small">
            ← Sessions
          </a>
          <h1 id="session-title" ref={heading} tabIndex={-1}>
            {session?.agentId ?? "Session"}
          </h1>
          <code className="muted small">{id}</code>
        </div>
        <div className="head-actions">
          <StatusBadge status={status} waitingFor={waiting} />
          {!ended && session && <EndSession id={id} />}
        </div>
      </div>
      {waiting && (
        <p className="callout" role="status" data-testid="waiting-callout">
          <strong>Waiting for you.</strong>{" "}
          {waitingText(
            waiting,
            agent.approvals.filter((a) => a.status === "pending" || a.status === "unconfirmed")
              .length,
          )}
        </p>
      )}
      {error && error.code !== "not_found" && (
        <p className="banner" role="status">
          Lost touch with the server ({error.message}). Reconnecting; nothing will be missed.
        </p>
      )}
      {error?.code === "not_found" && (
        <p className="error" role="alert">
          No session {id}. <a href="#/">Back to sessions</a>
        </p>
      )}
      <div className="session-grid">
        <div className="conversation">
          <Timeline agent={agent} />
          {agent.question && <QuestionBox agent={agent} />}
          {!ended && <Composer agent={agent} />}
          {ended && <p className="muted">This session has ended.</p>}
        </div>
        <aside className="side" aria-label="Session details">
          <LabelsPanel
            id={id}
            labels={shownLabels}
            readOnly={false}
            onChanged={(labels) => setPatched({ revision: session?.revision, labels })}
          />
          <UsagePanel
            usage={agent.usage}
            turnIds={session?.turns.map((t) => t.id) ?? []}
            budget={session?.budget}
          />
          <RequestsPanel requests={agent.egress} />
          <RendersPanel renders={agent.renders} />
          <ComputerPanel runtime={session?.runtime ?? null} />
          <section className="panel" aria-labelledby="result-title">
            <h2 id="result-title">Result</h2>
            {session?.result ? (
              <>
                <p className="muted small">
                  Turn <code>{session.result.turnId}</code> · {clock(session.result.reportedAt)}
                </p>
                <pre className="json" data-testid="session-result">
                  {pretty(session.result.data)}
                </pre>
              </>
            ) : (
              <p className="muted small">No result reported yet.</p>
            )}
          </section>
          <section className="panel" aria-labelledby="details-title">
            <h2 id="details-title">Details</h2>
            <dl className="facts">
              <dt>Environment</dt>
              <dd>{session?.environment ?? "—"}</dd>
              <dt>Deployment</dt>
              <dd>
                <code>{session?.deploymentId ?? "—"}</code>
              </dd>
              {session?.parent && (
                <>
                  <dt>Delegated by</dt>
                  <dd data-testid="parent-link">
                    <a href={`#/sessions/${session.parent.sessionId}`}>{session.parent.agentId}</a>{" "}
                    <span className="muted small">(call {session.parent.callId})</span>
                  </dd>
                </>
              )}
              <dt>Created</dt>
              <dd>{clock(session?.createdAt)}</dd>
              <dt>Last activity</dt>
              <dd title={clock(session?.updatedAt)}>{ago(session?.updatedAt) || "—"}</dd>
            </dl>
          </section>
        </aside>
      </div>
    </section>
  );
}
