import type { EgressRequest } from "@opencomputer/react";
import { clock } from "./format.ts";

/**
 * Requests the agent's tools made through connections: method, connection and path, status and
 * time. The log holds no credentials (the gateway adds them after recording) nor query strings,
 * so nothing secret can show here.
 */
export function RequestsPanel({ requests }: { requests: EgressRequest[] }) {
  return (
    <section className="panel" aria-labelledby="requests-title">
      <h2 id="requests-title">Outbound requests</h2>
      {requests.length === 0 ? (
        <p className="muted small">No requests through connections yet.</p>
      ) : (
        <ol className="requests" data-testid="requests">
          {requests.map((r) => (
            <li key={r.key} data-state={r.state}>
              <span className="request-line">
                <strong>{r.method}</strong> <code>{r.path}</code>
              </span>
              <span className="small muted">
                {r.connectionId} · <time dateTime={r.at}>{clock(r.at)}</time>
              </span>
              <span className="small">
                <RequestOutcome request={r} />
              </span>
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}

function RequestOutcome({ request: r }: { request: EgressRequest }) {
  if (r.state === "pending") return <span className="muted">waiting for the answer…</span>;
  if (r.state === "failed") return <span className="error-text">failed: {r.message}</span>;
  const tone = r.status !== undefined && r.status >= 400 ? "error-text" : "ok-text";
  return (
    <span className={tone}>
      {r.status} · {r.durationMs} ms
    </span>
  );
}
