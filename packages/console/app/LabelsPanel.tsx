import { ApiError } from "@opencomputer/react";
import { type FormEvent, useState } from "react";
import { useConnection } from "./connection.tsx";

const KEY = /^[a-z][a-z0-9_.-]{0,63}$/;

/**
 * The session's labels, editable: add or change one, remove one. Labels are for people and
 * filters (`label.<key>=` on the list); the agent never sees them.
 */
export function LabelsPanel({
  id,
  labels,
  readOnly,
  onChanged,
}: {
  id: string;
  labels: Record<string, string>;
  readOnly: boolean;
  onChanged: (labels: Record<string, string>) => void;
}) {
  const { api } = useConnection();
  const [key, setKey] = useState("");
  const [value, setValue] = useState("");
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState<string | null>(null);

  async function change(body: { set?: Record<string, string>; unset?: string[] }) {
    setBusy(true);
    setFailure(null);
    try {
      const { session } = await api.updateLabels(id, body);
      onChanged(session.labels);
      return true;
    } catch (e) {
      const where = e instanceof ApiError && e.path ? ` (${e.path})` : "";
      setFailure(`${(e as Error).message}${where}`);
      return false;
    } finally {
      setBusy(false);
    }
  }

  async function add(event: FormEvent) {
    event.preventDefault();
    const k = key.trim();
    if (!KEY.test(k)) {
      setFailure("A label name starts with a lowercase letter; then letters, digits, _ . or -.");
      return;
    }
    if (await change({ set: { [k]: value } })) {
      setKey("");
      setValue("");
    }
  }

  const entries = Object.entries(labels);
  return (
    <section className="panel" aria-labelledby="labels-title">
      <h2 id="labels-title">Labels</h2>
      {entries.length === 0 ? (
        <p className="muted small">No labels.</p>
      ) : (
        <ul className="label-list" data-testid="labels">
          {entries.map(([k, v]) => (
            <li key={k}>
              <span className="label">
                {k}: {v}
              </span>
              {!readOnly && (
                <button
                  type="button"
                  className="quiet small"
                  disabled={busy}
                  aria-label={`Remove label ${k}`}
                  onClick={() => void change({ unset: [k] })}
                >
                  Remove
                </button>
              )}
            </li>
          ))}
        </ul>
      )}
      {!readOnly && (
        <form className="label-form" onSubmit={add} aria-label="Add or change a label">
          <label>
            <span className="small">Name</span>
            <input value={key} onChange={(e) => setKey(e.target.value)} placeholder="team" />
          </label>
          <label>
            <span className="small">Value</span>
            <input value={value} onChange={(e) => setValue(e.target.value)} placeholder="billing" />
          </label>
          <button type="submit" disabled={busy || !key.trim()}>
            Save label
          </button>
        </form>
      )}
      {failure && (
        <p className="error" role="alert">
          {failure}
        </p>
      )}
    </section>
  );
}
