import { ApiError } from "@opencomputer/react";
import { type FormEvent, useState } from "react";
import { connect } from "./connection.tsx";

/** Checks the key with one cheap authenticated call before keeping it. */
export function SignIn({ onSignedIn }: { onSignedIn: (key: string) => void }) {
  const [key, setKey] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function submit(event: FormEvent) {
    event.preventDefault();
    const trimmed = key.trim();
    if (!trimmed) return setError("Enter an API key.");
    setBusy(true);
    setError(null);
    try {
      await connect(trimmed, () => {}).api.listSessions({ limit: 1 });
      onSignedIn(trimmed);
    } catch (e) {
      setError(
        e instanceof ApiError && e.status === 401
          ? "That key was not accepted. `opencomputer dev` prints a development key when it starts."
          : `Could not sign in: ${(e as Error).message}`,
      );
    } finally {
      setBusy(false);
    }
  }

  return (
    <main className="signin">
      <form onSubmit={submit} aria-labelledby="signin-title">
        <h1 id="signin-title">OpenComputer console</h1>
        <p className="muted">Sign in with an API key of this server.</p>
        <label htmlFor="api-key">API key</label>
        <input
          id="api-key"
          type="password"
          autoComplete="off"
          spellCheck={false}
          // biome-ignore lint/a11y/noAutofocus: the only field on the page
          autoFocus
          value={key}
          onChange={(e) => setKey(e.target.value)}
          aria-invalid={error ? true : undefined}
          aria-describedby={error ? "signin-error" : undefined}
        />
        {error && (
          <p id="signin-error" className="error" role="alert">
            {error}
          </p>
        )}
        <button type="submit" className="primary" disabled={busy}>
          {busy ? "Signing in…" : "Sign in"}
        </button>
        <p className="muted small">The key is kept in this tab only (sessionStorage).</p>
      </form>
    </main>
  );
}
