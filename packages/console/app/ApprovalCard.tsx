import type { Approval, UseAgentResult } from "@opencomputer/react";
import { useState } from "react";
import { pretty } from "./format.ts";

const OUTCOME: Record<string, string> = {
  pending: "Waiting for your decision",
  approved: "Approved, applying…",
  applying: "Applying…",
  applied: "Applied",
  denied: "Denied",
  failed: "Apply failed",
  unconfirmed: "Unconfirmed: it may or may not have happened",
  dismissed: "Dismissed as it is",
};

/** A proposed write: the card, then the person's decision, then what the apply did. */
export function ApprovalCard({ approval, agent }: { approval: Approval; agent: UseAgentResult }) {
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState<string | null>(null);
  const { card } = approval;

  async function run(action: () => Promise<unknown>) {
    setBusy(true);
    setFailure(null);
    try {
      await action();
    } catch (e) {
      setFailure((e as Error).message);
    } finally {
      setBusy(false);
    }
  }

  const titleId = `apr-${approval.id}`;
  return (
    <article
      className={`approval approval-${approval.status}`}
      aria-labelledby={titleId}
      data-approval={approval.id}
      data-status={approval.status}
    >
      <header>
        <span className="eyebrow">Approval · {approval.tool}</span>
        <h3 id={titleId}>{card.title}</h3>
      </header>
      {card.summary && <p>{card.summary}</p>}
      {card.facts && card.facts.length > 0 && (
        <dl className="facts">
          {card.facts.map((f) => (
            <div key={f.label} className="fact">
              <dt>{f.label}</dt>
              <dd>{f.value}</dd>
            </div>
          ))}
        </dl>
      )}
      <details>
        <summary className="small">Tool input</summary>
        <pre className="json">{pretty(approval.input)}</pre>
      </details>
      <p className="approval-status" role="status">
        <strong>{OUTCOME[approval.status] ?? approval.status}</strong>
        {approval.decidedBy ? <span className="muted"> · by {approval.decidedBy}</span> : null}
      </p>
      {approval.status === "applied" &&
        approval.outcome !== undefined &&
        approval.outcome !== null && <pre className="json">{pretty(approval.outcome)}</pre>}
      {approval.warning && approval.status === "applied" && (
        <p className="warning">{approval.warning}</p>
      )}
      {approval.message && (approval.status === "failed" || approval.status === "unconfirmed") && (
        <p className="error">{approval.message}</p>
      )}
      {approval.status === "pending" && (
        <div className="actions">
          <button
            type="button"
            className="primary"
            disabled={busy}
            onClick={() => void run(() => agent.decide(approval.id, "approve"))}
          >
            Approve
          </button>
          <button
            type="button"
            disabled={busy}
            onClick={() => void run(() => agent.decide(approval.id, "deny"))}
          >
            Deny
          </button>
        </div>
      )}
      {approval.status === "unconfirmed" && (
        <div className="actions">
          <button
            type="button"
            className="primary"
            disabled={busy}
            onClick={() => void run(() => agent.retry(approval.id))}
          >
            Retry apply
          </button>
          <button
            type="button"
            disabled={busy}
            onClick={() => void run(() => agent.dismiss(approval.id))}
          >
            Dismiss
          </button>
        </div>
      )}
      {failure && (
        <p className="error" role="alert">
          {failure}
        </p>
      )}
    </article>
  );
}
