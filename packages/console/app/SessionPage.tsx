import { useAgent } from "@opencomputer/react";
import { useEffect, useRef } from "react";
import { Composer } from "./Composer.tsx";
import { ComputerPanel } from "./ComputerPanel.tsx";
import { basePath, useConnection } from "./connection.tsx";
import { clock, pretty } from "./format.ts";
import { QuestionBox } from "./QuestionBox.tsx";
import { StatusBadge } from "./StatusBadge.tsx";
import { Timeline } from "./Timeline.tsx";

/** One session: its conversation, open question, approvals and computer, followed live. */
export function SessionPage({ id }: { id: string }) {
  const { headers } = useConnection();
  const agent = useAgent({ sessionId: id, basePath, headers });
  const { session, error } = agent;
  const status = session?.status ?? agent.status;
  const ended = status === "ended";
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), []);

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
        <StatusBadge status={status} />
      </div>
      {error && error.code !== "not_found" && (
        <p className="banner" role="status">
          Connection problem ({error.code}): {error.message}. Retrying from event {agent.cursor}.
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
              <dt>Created</dt>
              <dd>{clock(session?.createdAt)}</dd>
              <dt>Events read</dt>
              <dd data-testid="cursor">{agent.cursor}</dd>
            </dl>
          </section>
        </aside>
      </div>
    </section>
  );
}
