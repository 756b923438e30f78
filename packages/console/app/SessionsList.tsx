import type { SessionListRow } from "@opencomputer/react";
import { useEffect, useState } from "react";
import { useConnection } from "./connection.tsx";
import { ago } from "./format.ts";
import { StatusBadge } from "./StatusBadge.tsx";

const STATUSES = ["", "new", "idle", "running", "waiting_runtime", "failed", "ended"] as const;
const LIVE_MS = 2000;

/** Newest sessions first, re-read every LIVE_MS so statuses move without a reload. */
export function SessionsList() {
  const { api } = useConnection();
  const [agent, setAgent] = useState("");
  const [status, setStatus] = useState<(typeof STATUSES)[number]>("");
  const [sessions, setSessions] = useState<SessionListRow[] | null>(null);
  const [older, setOlder] = useState<{ rows: SessionListRow[]; cursor: string | null }>({
    rows: [],
    cursor: null,
  });
  const [error, setError] = useState<string | null>(null);
  const [agents, setAgents] = useState<string[]>([]);

  useEffect(() => {
    api.listAgents().then(
      (list) => setAgents(list.map((a) => a.id)),
      () => {},
    );
  }, [api]);

  useEffect(() => {
    let alive = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    setOlder({ rows: [], cursor: null });
    const load = async () => {
      // A hidden tab does not poll; it catches up as soon as it is shown again.
      if (document.hidden) {
        timer = setTimeout(load, LIVE_MS);
        return;
      }
      try {
        const page = await api.listSessions({ agent: agent.trim(), status, limit: 50 });
        if (!alive) return;
        setSessions(page.sessions);
        setOlder((o) => (o.rows.length ? o : { rows: [], cursor: page.nextCursor }));
        setError(null);
      } catch (e) {
        if (alive) setError((e as Error).message);
      }
      if (alive) timer = setTimeout(load, LIVE_MS);
    };
    // Typing in the agent filter waits for a pause before asking the server.
    const first = setTimeout(load, 250);
    return () => {
      alive = false;
      clearTimeout(first);
      clearTimeout(timer);
    };
  }, [api, agent, status]);

  async function loadOlder() {
    if (!older.cursor) return;
    const page = await api.listSessions({
      agent: agent.trim(),
      status,
      limit: 50,
      cursor: older.cursor,
    });
    setOlder((o) => ({ rows: [...o.rows, ...page.sessions], cursor: page.nextCursor }));
  }

  const rows = [...(sessions ?? []), ...older.rows];
  return (
    <section aria-labelledby="sessions-title">
      <div className="page-head">
        <h1 id="sessions-title">Sessions</h1>
        <a className="button primary" href="#/new">
          New session
        </a>
      </div>
      <form className="filters" onSubmit={(e) => e.preventDefault()} aria-label="Filter sessions">
        <label>
          Agent
          <input
            value={agent}
            list="agent-ids"
            placeholder="any agent"
            onChange={(e) => setAgent(e.target.value)}
          />
        </label>
        <datalist id="agent-ids">
          {agents.map((a) => (
            <option key={a} value={a} />
          ))}
        </datalist>
        <label>
          Status
          <select
            value={status}
            onChange={(e) => setStatus(e.target.value as (typeof STATUSES)[number])}
          >
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {s ? s.replace("_", " ") : "any status"}
              </option>
            ))}
          </select>
        </label>
      </form>
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      {sessions === null && !error && <p className="muted">Loading…</p>}
      {sessions !== null && rows.length === 0 && (
        <p className="empty">
          No sessions{agent || status ? " match these filters" : " yet"}.{" "}
          <a href="#/new">Start one</a>.
        </p>
      )}
      {rows.length > 0 && (
        <ul className="session-list" aria-live="polite">
          {rows.map((s) => (
            <li key={s.id}>
              <a href={`#/sessions/${s.id}`} className="session-row" data-session={s.id}>
                <span className="row-main">
                  <span className="agent">{s.agentId}</span>
                  <code className="muted">{s.id}</code>
                </span>
                <span className="row-meta">
                  <StatusBadge status={s.status} />
                  {s.activity?.queued ? (
                    <span className="muted small">{s.activity.queued} queued</span>
                  ) : null}
                  <time dateTime={s.updatedAt} title={s.updatedAt} className="muted small">
                    {ago(s.updatedAt)}
                  </time>
                </span>
              </a>
            </li>
          ))}
        </ul>
      )}
      {older.cursor && sessions && sessions.length >= 50 && (
        <button type="button" onClick={() => void loadOlder()}>
          Older sessions
        </button>
      )}
    </section>
  );
}
