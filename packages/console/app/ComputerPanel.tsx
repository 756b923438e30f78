import type { RuntimeState } from "@opencomputer/react";
import { ago, clock } from "./format.ts";

/** The session's computer as `GET /sessions/<id>` reports it (`runtime`). */
export function ComputerPanel({ runtime }: { runtime: RuntimeState | null }) {
  const none = !runtime || runtime.generation === 0 || runtime.state === "none";
  return (
    <section className="panel" aria-labelledby="computer-title">
      <h2 id="computer-title">Computer</h2>
      {none ? (
        <p className="muted small">No computer yet: one starts when a tool needs it.</p>
      ) : (
        <dl className="facts" data-testid="computer">
          <dt>State</dt>
          <dd>{runtime.state}</dd>
          <dt>Generation</dt>
          <dd>{runtime.generation}</dd>
          {runtime.state === "running" && runtime.expiresAt && (
            <>
              <dt>Expires</dt>
              <dd title={clock(runtime.expiresAt)}>{ago(runtime.expiresAt)}</dd>
            </>
          )}
          {runtime.state === "released" && (
            <>
              <dt>Released</dt>
              <dd>
                {clock(runtime.releasedAt)} ({runtime.releaseReason ?? "unknown"})
              </dd>
            </>
          )}
          {runtime.replacedAt && (
            <>
              <dt>Replaced</dt>
              <dd>
                {clock(runtime.replacedAt)} ({runtime.replacementReason ?? "unknown"})
              </dd>
            </>
          )}
        </dl>
      )}
    </section>
  );
}
