import { type AgentSummary, ApiError, type DeploymentSummary } from "@opencomputer/react";
import { useCallback, useEffect, useState } from "react";
import { AliasList } from "./AgentsPage.tsx";
import { useConnection } from "./connection.tsx";
import { ago, clock } from "./format.ts";
import { usePageTitle } from "./title.ts";

type Notice = { kind: "ok" | "error"; text: string } | null;

const REASONS: Record<string, string> = {
  build: "built",
  deploy: "deployed",
  rollback: "rolled back",
};

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

  /** Back to an earlier deployment is a rollback; forward to a later one is a move. */
  async function moveProduction(to: string, forward: boolean) {
    setBusy(to);
    setNotice(null);
    try {
      if (forward) await api.moveAlias(id, "production", to);
      else await api.rollback(id, { alias: "production", to });
      setNotice({ kind: "ok", text: `production now points at ${to}.` });
      await load();
    } catch (e) {
      setNotice({ kind: "error", text: rollbackFailure(e) });
    } finally {
      setBusy(null);
    }
  }

  const production = agent?.aliases?.production;
  const productionBuilt = deployments?.find((d) => d.id === production)?.createdAt;
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
            <>
              <h3>History</h3>
              <ol className="history small" data-testid="alias-history">
                {[...agent.history].reverse().map((h, i) => (
                  // biome-ignore lint/suspicious/noArrayIndexKey: the history only ever appends
                  <li key={i}>
                    <time dateTime={h.at}>{clock(h.at)}</time>: {h.alias} →{" "}
                    <code>{h.deploymentId}</code>{" "}
                    <span className="muted">({REASONS[h.reason] ?? h.reason}</span>
                    {h.previous ? (
                      <span className="muted">
                        , was <code>{h.previous}</code>
                      </span>
                    ) : null}
                    <span className="muted">)</span>
                  </li>
                ))}
              </ol>
            </>
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
                      {d.tools
                        ? ` · ${d.tools.length} ${d.tools.length === 1 ? "tool" : "tools"}`
                        : ""}
                    </span>
                    <AliasesHere names={d.aliases ?? aliasesNaming(agent?.aliases, d.id)} />
                  </span>
                  {agent && d.id !== production && (
                    <MoveButton
                      forward={productionBuilt !== undefined && d.createdAt > productionBuilt}
                      busy={busy}
                      id={d.id}
                      onMove={(forward) => void moveProduction(d.id, forward)}
                    />
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

function MoveButton(props: {
  forward: boolean;
  busy: string | null;
  id: string;
  onMove: (forward: boolean) => void;
}) {
  const label = props.forward ? "Make this production" : "Roll back production to this";
  return (
    <button
      type="button"
      disabled={props.busy !== null}
      onClick={() => props.onMove(props.forward)}
    >
      {props.busy === props.id ? "Moving production…" : label}
    </button>
  );
}

/** The aliases naming a deployment, for a server whose deployments do not list them. */
function aliasesNaming(aliases: Record<string, string | null> | undefined, id: string): string[] {
  return Object.entries(aliases ?? {})
    .filter(([, dep]) => dep === id)
    .map(([alias]) => alias);
}

function AliasesHere({ names }: { names: string[] }) {
  if (names.length === 0) return null;
  return (
    <span className="aliases small">
      {names.map((alias) => (
        <span key={alias} className="alias alias-here">
          {alias}
        </span>
      ))}
    </span>
  );
}

/** A failed move in words: a server without the route says so, and what to do instead. */
function rollbackFailure(e: unknown): string {
  // Today's server has no such route; a server whose catalog is read-only refuses the write.
  if (e instanceof ApiError && e.status === 404 && /no route|does not accept/i.test(e.message)) {
    return (
      "This server cannot move its aliases (it has no route for it). Update the server, " +
      "or deploy that version again with `opencomputer deploy --alias production`."
    );
  }
  const code = e instanceof ApiError ? ` (${e.code})` : "";
  return `Could not move production: ${(e as Error).message}${code}`;
}
