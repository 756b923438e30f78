import { ApiError, useAgent } from "@opencomputer/react";
import { type FormEvent, useEffect, useState } from "react";
import { basePath, useConnection } from "./connection.tsx";
import { navigate } from "./route.ts";
import { usePageTitle } from "./title.ts";

/** Starts a session on a deployed agent, optionally with its first message. */
export function NewSession() {
  usePageTitle("New session");
  const { api, headers } = useConnection();
  const [agents, setAgents] = useState<string[] | null>(null);
  const [agent, setAgent] = useState("");
  const [alias, setAlias] = useState<"development" | "production">("development");
  const [text, setText] = useState("");
  const [error, setError] = useState<{ message: string; field?: string } | null>(null);
  const [busy, setBusy] = useState(false);
  // Create mode: the hook creates the session on the first send (once per agent choice, so a
  // double submit makes one session), and the session page then attaches to it.
  const agentRef = `${agent.trim() || "_"}@${alias}`;
  const session = useAgent(agentRef, { basePath, headers });

  useEffect(() => {
    api.listAgents().then(
      (list) => {
        const ids = list.map((a) => a.id);
        setAgents(ids);
        setAgent((current) => current || ids[0] || "");
      },
      () => setAgents([]),
    );
  }, [api]);

  async function submit(event: FormEvent) {
    event.preventDefault();
    const id = agent.trim();
    if (!id) return setError({ message: "Choose an agent.", field: "agent" });
    setBusy(true);
    setError(null);
    try {
      if (text.trim()) await session.send(text.trim());
      const sessionId = await session.create();
      navigate(`/sessions/${sessionId}`);
    } catch (e) {
      const code = e instanceof ApiError ? ` (${e.code})` : "";
      setError({
        message: `${(e as Error).message}${code}`,
        field: e instanceof ApiError && /agent/.test(e.code + (e.path ?? "")) ? "agent" : "",
      });
      setBusy(false);
    }
  }

  return (
    <section aria-labelledby="new-title" className="narrow">
      <h1 id="new-title">New session</h1>
      <form onSubmit={submit} className="stack">
        <label htmlFor="new-agent">Agent</label>
        {agents === null ? (
          <select id="new-agent" disabled>
            <option>Loading agents…</option>
          </select>
        ) : agents.length > 0 ? (
          <select id="new-agent" value={agent} onChange={(e) => setAgent(e.target.value)}>
            {agents.map((a) => (
              <option key={a} value={a}>
                {a}
              </option>
            ))}
          </select>
        ) : (
          <input
            id="new-agent"
            value={agent}
            placeholder="agent id, e.g. support"
            onChange={(e) => setAgent(e.target.value)}
            aria-invalid={error?.field === "agent" ? true : undefined}
          />
        )}
        <fieldset className="inline">
          <legend>Alias</legend>
          {(["development", "production"] as const).map((a) => (
            <label key={a} className="radio">
              <input
                type="radio"
                name="alias"
                value={a}
                checked={alias === a}
                onChange={() => setAlias(a)}
              />
              {a}
            </label>
          ))}
        </fieldset>
        <label htmlFor="new-text">First message (optional)</label>
        <textarea
          id="new-text"
          rows={4}
          value={text}
          onChange={(e) => setText(e.target.value)}
          onKeyDown={(e) => {
            if (e.key === "Enter" && (e.metaKey || e.ctrlKey)) void submit(e);
          }}
        />
        {error && (
          <p className="error" role="alert">
            {error.message}
          </p>
        )}
        <div className="actions">
          <button type="submit" className="primary" disabled={busy}>
            {busy ? "Starting…" : "Start session"}
          </button>
          <a href="#/" className="button quiet">
            Cancel
          </a>
        </div>
      </form>
    </section>
  );
}
