import { useState } from "react";
import { useConnection } from "./connection.tsx";

/**
 * Ends the session after a second click: ending cancels queued and running turns and cannot be
 * undone, so the button asks first (inline, not a browser dialog). The page learns of the end
 * from the event log (`session.ended`), like every other change.
 */
export function EndSession({ id }: { id: string }) {
  const { api } = useConnection();
  const [confirming, setConfirming] = useState(false);
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState<string | null>(null);

  async function end() {
    setBusy(true);
    setFailure(null);
    try {
      await api.end(id);
      setConfirming(false);
    } catch (e) {
      setFailure(`Could not end the session: ${(e as Error).message}`);
    } finally {
      setBusy(false);
    }
  }

  if (!confirming) {
    return (
      <button type="button" className="quiet" onClick={() => setConfirming(true)}>
        End session
      </button>
    );
  }
  return (
    <fieldset className="confirm">
      <legend className="small">
        End it? Running and queued turns stop; nothing more can be sent.
      </legend>
      <div className="actions">
        <button type="button" className="danger" disabled={busy} onClick={() => void end()}>
          {busy ? "Ending…" : "Yes, end it"}
        </button>
        <button type="button" disabled={busy} onClick={() => setConfirming(false)}>
          Keep it
        </button>
      </div>
      {failure && (
        <p className="error" role="alert">
          {failure}
        </p>
      )}
    </fieldset>
  );
}
