const LABELS: Record<string, string> = {
  new: "new",
  idle: "idle",
  running: "running",
  waiting_runtime: "waiting for a computer",
  failed: "failed",
  ended: "ended",
};

const WAITING_TITLE = {
  answer: "The agent asked a question and waits for your answer",
  approval: "An approval waits for your decision",
} as const;

/**
 * Status as text plus a colour class; the text alone carries the meaning. A session waiting for
 * a person says "waiting for you" rather than its status (`idle` would hide that someone has to
 * act).
 */
export function StatusBadge({
  status,
  waitingFor,
}: {
  status: string | null | undefined;
  waitingFor?: "answer" | "approval" | null;
}) {
  const s = status ?? "unknown";
  if (waitingFor && s !== "ended") {
    return (
      <span
        className="badge badge-waiting"
        title={WAITING_TITLE[waitingFor]}
        data-waiting={waitingFor}
      >
        waiting for you
      </span>
    );
  }
  return <span className={`badge badge-${s}`}>{LABELS[s] ?? s}</span>;
}
