const LABELS: Record<string, string> = {
  new: "new",
  idle: "idle",
  running: "running",
  waiting_runtime: "waiting for computer",
  failed: "failed",
  ended: "ended",
};

/** Status as text plus a colour class; the text alone carries the meaning. */
export function StatusBadge({ status }: { status: string | null | undefined }) {
  const s = status ?? "unknown";
  return <span className={`badge badge-${s}`}>{LABELS[s] ?? s}</span>;
}
