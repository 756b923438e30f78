import { type AgentSummary, ApiError, type DeploymentSummary } from "@opencomputer/react";
import { useCallback, useEffect, useState } from "react";
import { AliasList } from "./AgentsPage.tsx";
import { useConnection } from "./connection.tsx";
import { ago, clock } from "./format.ts";
import { usePageTitle } from "./title.ts";

type Notice = { kind: "ok" | "error"; text: string } | null;

/**
 * One agent: where its aliases point, its deployments newest first (the history), and a rollback
 * of `production` to an earlier deployment.
 */
export function AgentPage({ id }: { id: string }) {
  const { api } = useConnection();
  const [agent, setAgent] = useState<AgentSummary | null | undefined>(undefined);
  const [deployments, setDeployments] = useState<DeploymentSummary[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<Notice>(null);
  const [busy, setBusy] = useState<string | null>(null);
  usePageTitle(`${id} · Agents`);

  const load = useCallback(async () => {
    try {
      const [agents, list] = await Promise.all([api.listAgents(), api.listDeployments(id)]);
      setAgent(agents.find((a) => a.id === id) ?? null);
      setDeployments(list);
      setError(null);
    } catch (e) {
      setError((e as Error).message);
    }
  }, [api, id]);
  useEffect(() => void load(), [load]);

  async function rollback(to: string) {
    setBusy(to);
    setNotice(null);
    try {
      await api.rollback(id, { alias: "production", to });
      setNotice({ kind: "ok", text: `production now points at ${to}.` });
      await load();
    } catch (e) {
      setNotice({ kind: "error", text: rollbackFailure(e) });
    } finally {
      setBusy(null);
    }
  }

  const production = agent?.aliases?.production;
  return (
    <section aria-labelledby="agent-title">
      <div className="page-head">
        <div>
          <a href="#/agents" className="muted small">
            ← Agents
          </a>
          <h1 id="agent-title">{id}</h1>
        </div>
        <a className="button" href={`#/?agent=${encodeURIComponent(id)}`}>
          Its sessions
        </a>
      </div>
      {error && (
        <p className="error" role="alert">
          Could not read this agent: {error}
        </p>
      )}
      {agent === null && <p className="empty">No deployed agent named {id}.</p>}
      {agent && (
        <section className="panel" aria-labelledby="aliases-title">
          <h2 id="aliases-title">Aliases</h2>
          <p className="small muted">
            New sessions on <code>{id}@production</code> or <code>{id}@development</code> run the
            deployment the alias names; a running session keeps the one it started on.
          </p>
          <AliasList aliases={agent.aliases} />
          {agent.history && agent.history.length > 0 && (
            <ol className="history small" data-testid="alias-history">
              {agent.history.map((h) => (
                <li key={`${h.alias}-${h.movedAt}-${h.deploymentId}`}>
                  {clock(h.movedAt)}: {h.alias} → <code>{h.deploymentId}</code>
                  {h.from ? (
                    <span className="muted">
                      {" "}
                      (was <code>{h.from}</code>)
                    </span>
                  ) : null}
                  {h.reason ? <span className="muted"> · {h.reason}</span> : null}
                </li>
              ))}
            </ol>
          )}
        </section>
      )}
      {notice && (
        <p
          className={notice.kind === "ok" ? "callout" : "error"}
          role={notice.kind === "ok" ? "status" : "alert"}
          data-testid="rollback-notice"
        >
          {notice.text}
        </p>
      )}
      {deployments && (
        <section aria-labelledby="deployments-title">
          <h2 id="deployments-title">Deployments</h2>
          {deployments.length === 0 ? (
            <p className="empty">No deployments of {id}.</p>
          ) : (
            <ul className="session-list" data-testid="deployments">
              {deployments.map((d) => (
                <li key={d.id} className="deployment-row" data-deployment={d.id}>
                  <span className="row-main">
                    <code>{d.id}</code>
                    <span className="small muted">
                      built <time dateTime={d.createdAt}>{ago(d.createdAt)}</time>
                      {d.tools ? ` · ${d.tools.length} tools` : ""}
                    </span>
                    <AliasesHere aliases={agent?.aliases} deploymentId={d.id} />
                  </span>
                  {agent && d.id !== production && (
                    <button
                      type="button"
                      disabled={busy !== null}
                      onClick={() => void rollback(d.id)}
                    >
                      {busy === d.id ? "Rolling back…" : "Roll back production to this"}
                    </button>
                  )}
                </li>
              ))}
            </ul>
          )}
        </section>
      )}
    </section>
  );
}

function AliasesHere({
  aliases,
  deploymentId,
}: {
  aliases: Record<string, string> | undefined;
  deploymentId: string;
}) {
  const here = Object.entries(aliases ?? {}).filter(([, dep]) => dep === deploymentId);
  if (here.length === 0) return null;
  return (
    <span className="aliases small">
      {here.map(([alias]) => (
        <span key={alias} className="alias alias-here">
          {alias}
        </span>
      ))}
    </span>
  );
}

/** A failed rollback in words: a server without the route says so, and what to do instead. */
function rollbackFailure(e: unknown): string {
  if (e instanceof ApiError && e.status === 404 && /no route/i.test(e.message)) {
    return (
      "This server cannot move aliases back yet (it has no rollback route). Update the server, " +
      "or deploy that version again with `opencomputer deploy --alias production`."
    );
  }
  const code = e instanceof ApiError ? ` (${e.code})` : "";
  return `Could not roll back: ${(e as Error).message}${code}`;
}
