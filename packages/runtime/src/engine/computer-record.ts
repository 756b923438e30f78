import type { JsonValue } from "@opencomputer/agent";
import { isoNow } from "../clock.ts";
import type { NewEvent } from "../ports/store.ts";
import { type EngineContext, write } from "./context.ts";

/** A change of a session's computer, as a computer provider reports it. */
export interface ComputerChange {
  generation: number;
  state: "running" | "released";
  /** Why it was released; on `running`, why the previous generation was replaced (if it was). */
  reason?: string;
  /** Milliseconds since the Unix epoch. */
  startedAt: number;
  expiresAt: number;
  lifetimeSeconds?: number;
  idleReleaseSeconds?: number;
}

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * Records a computer start or release in `session.runtime` (PLATFORM's fields) with its
 * `runtime.started` / `runtime.replaced` / `runtime.released` event, in one write.
 */
export async function recordComputer(
  ctx: EngineContext,
  sessionId: string,
  change: ComputerChange,
): Promise<void> {
  const session = await ctx.store.getSession(sessionId);
  if (!session) return;
  const previous = (session.runtime ?? {}) as Record<string, JsonValue>;
  const now = isoNow();
  const events: NewEvent[] = [];
  let runtime: Record<string, JsonValue>;
  if (change.state === "running") {
    const replaced = change.generation > 1 && change.reason !== undefined;
    runtime = {
      ...previous,
      generation: change.generation,
      state: "running",
      startedAt: iso(change.startedAt),
      expiresAt: iso(change.expiresAt),
      releasedAt: null,
      releaseReason: null,
      ...(replaced ? { replacedAt: now, replacementReason: change.reason ?? null } : {}),
      ...(change.lifetimeSeconds !== undefined ? { lifetimeSeconds: change.lifetimeSeconds } : {}),
      ...(change.idleReleaseSeconds !== undefined
        ? { idleReleaseSeconds: change.idleReleaseSeconds }
        : {}),
    };
    if (replaced) {
      events.push({
        type: "runtime.replaced",
        data: { generation: change.generation, reason: change.reason ?? null },
      });
    }
    events.push({
      type: "runtime.started",
      data: {
        generation: change.generation,
        expiresAt: iso(change.expiresAt),
        ...(change.generation > 1 ? { previousGeneration: change.generation - 1 } : {}),
      },
    });
  } else {
    runtime = {
      ...previous,
      generation: change.generation,
      state: "released",
      releasedAt: now,
      releaseReason: change.reason ?? "unknown",
    };
    events.push({
      type: change.reason === "lifetime" ? "runtime.expired" : "runtime.released",
      data: { generation: change.generation, reason: change.reason ?? "unknown" },
    });
  }
  await write(ctx, sessionId, { ops: [{ type: "session.update", patch: { runtime } }], events });
}
