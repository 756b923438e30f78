import type { AgentSummary } from "@opencomputer/react";
import { useEffect, useState } from "react";
import { useConnection } from "./connection.tsx";
import { ago } from "./format.ts";
import { usePageTitle } from "./title.ts";

/** The deployed agents and where each alias points. */
export function AgentsPage() {
  const { api } = useConnection();
  const [agents, setAgents] = useState<AgentSummary[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  usePageTitle("Agents");

  useEffect(() => {
    api.listAgents().then(setAgents, (e: Error) => setError(e.message));
  }, [api]);

  return (
    <section aria-labelledby="agents-title">
      <div className="page-head">
        <h1 id="agents-title">Agents</h1>
      </div>
      {error && (
        <p className="error" role="alert">
          Could not read the agents: {error}
        </p>
      )}
      {agents === null && !error && <p className="muted">Loading…</p>}
      {agents?.length === 0 && (
        <p className="empty">
          No agents deployed yet. Run <code>opencomputer dev</code> or{" "}
          <code>opencomputer deploy</code> in your project.
        </p>
      )}
      {agents && agents.length > 0 && (
        <ul className="session-list">
          {agents.map((a) => (
            <li key={a.id}>
              <a href={`#/agents/${a.id}`} className="session-row" data-agent={a.id}>
                <span className="row-main">
                  <span className="agent">{a.id}</span>
                  <AliasList aliases={a.aliases} />
                </span>
                {a.deployment && (
                  <span className="row-meta small muted">
                    latest built {ago(a.deployment.createdAt)}
                  </span>
                )}
              </a>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

export function AliasList({ aliases }: { aliases: Record<string, string | null> | undefined }) {
  const entries = Object.entries(aliases ?? {});
  if (entries.length === 0) return <span className="muted small">No aliases</span>;
  return (
    <span className="aliases small">
      {entries.map(([alias, dep]) => (
        <span key={alias} className="alias" data-alias={alias}>
          {alias} → {dep ? <code>{dep}</code> : <span className="muted">not deployed</span>}
        </span>
      ))}
    </span>
  );
}
