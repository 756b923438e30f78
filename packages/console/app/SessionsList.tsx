import type { SessionListRow } from "@opencomputer/react";
import { useEffect, useState } from "react";
import { useConnection } from "./connection.tsx";
import { ago } from "./format.ts";
import { outcomeOf } from "./outcome.ts";
import { StatusBadge } from "./StatusBadge.tsx";
import { usePageTitle } from "./title.ts";

// "waiting" is not a status: it asks the server for sessions waiting for a person.
const STATUSES = [
  "",
  "waiting",
  "new",
  "idle",
  "running",
  "waiting_runtime",
  "failed",
  "ended",
] as const;
const STATUS_LABELS: Record<string, string> = {
  "": "any status",
  waiting: "waiting for you",
  waiting_runtime: "waiting for a computer",
};
const LIVE_MS = 2000;
/** How many waiting sessions the count in the title and banner reads at most. */
const WAITING_CAP = 20;

/** Newest sessions first, re-read every LIVE_MS so statuses move without a reload. */
export function SessionsList({ agent: initialAgent = "" }: { agent?: string | undefined }) {
  const { api } = useConnection();
  const [agent, setAgent] = useState(initialAgent);
  const [status, setStatus] = useState<(typeof STATUSES)[number]>("");
  const [sessions, setSessions] = useState<SessionListRow[] | null>(null);
  const [older, setOlder] = useState<{ rows: SessionListRow[]; cursor: string | null }>({
    rows: [],
    cursor: null,
  });
  const [error, setError] = useState<string | null>(null);
  const [agents, setAgents] = useState<string[]>([]);
  const [waiting, setWaiting] = useState<number | null>(null);
  usePageTitle(
    waiting
      ? `(${waiting >= WAITING_CAP ? `${WAITING_CAP}+` : waiting}) waiting for you · Sessions`
      : "Sessions",
  );

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
        const [page, waitingPage] = await Promise.all([
          api.listSessions(query(agent, status, 50)),
          api.listSessions({ waiting: true, limit: WAITING_CAP }),
        ]);
        if (!alive) return;
        setSessions(page.sessions);
        setWaiting(waitingPage.sessions.length);
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
    const page = await api.listSessions({ ...query(agent, status, 50), cursor: older.cursor });
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
                {STATUS_LABELS[s] ?? s}
              </option>
            ))}
          </select>
        </label>
      </form>
      {waiting !== null && waiting > 0 && status !== "waiting" && (
        <p className="callout" data-testid="waiting-banner">
          <strong>
            {waiting >= WAITING_CAP ? `${WAITING_CAP}+` : waiting}{" "}
            {waiting === 1 ? "session is" : "sessions are"} waiting for you.
          </strong>{" "}
          <button type="button" className="link" onClick={() => setStatus("waiting")}>
            Show them
          </button>
        </p>
      )}
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
                  <span className="row-title">
                    <span className="agent">{s.agentId}</span>
                    <StatusBadge status={s.status} waitingFor={s.waitingFor} />
                  </span>
                  <span className="first-message" data-testid="first-message">
                    {s.firstMessage ?? <span className="muted">No message yet</span>}
                  </span>
                  {Object.keys(s.labels).length > 0 && (
                    <span className="labels small">
                      {Object.entries(s.labels).map(([k, v]) => (
                        <span key={k} className="label">
                          {k}: {v}
                        </span>
                      ))}
                    </span>
                  )}
                </span>
                <span className="row-meta small">
                  <Outcome row={s} />
                  {s.activity?.queued ? (
                    <span className="muted">{s.activity.queued} queued</span>
                  ) : null}
                  <time
                    dateTime={s.updatedAt}
                    title={`Last activity ${s.updatedAt}`}
                    className="muted"
                  >
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

function query(agent: string, status: (typeof STATUSES)[number], limit: number) {
  return status === "waiting"
    ? { agent: agent.trim(), waiting: true, limit }
    : { agent: agent.trim(), status, limit };
}

function Outcome({ row }: { row: SessionListRow }) {
  const outcome = outcomeOf(row);
  return (
    <span className={`outcome outcome-${outcome.tone}`} data-testid="outcome">
      {outcome.text}
    </span>
  );
}
