import type { SessionRecord, TurnRecord } from "../ports/records.ts";
import type { NewEvent } from "../ports/store.ts";
import type { EngineContext } from "./context.ts";
import { SessionActor } from "./session-actor.ts";

/** The session actors of one runtime: made on demand, given up when idle, stopped on close. */
export interface SessionActors {
  /** The live actors by session id (an actor holds or just held the session's lease). */
  readonly actors: Map<string, SessionActor>;
  /** Whether `stopTaking` was called: nothing is kicked or started after it. */
  readonly closed: boolean;
  /** Wakes the session's actor; `session`: the session as just read, when still current. */
  kick(sessionId: string, session?: SessionRecord): void;
  /** Inserts `turn` already started and runs it; false when it could not, with nothing written. */
  startNew(
    sessionId: string,
    session: SessionRecord,
    turn: TurnRecord,
    received: NewEvent[],
  ): Promise<boolean>;
  /** From now on nothing is kicked or started. */
  stopTaking(): void;
  /** Drops pending idle releases, abandons every actor's work and releases their leases. */
  releaseAll(): Promise<void>;
}

export function createSessionActors(ctx: EngineContext, idleReleaseMs: number): SessionActors {
  const actors = new Map<string, SessionActor>();
  const idleReleases = new Map<string, () => void>();
  let closed = false;

  function actor(sessionId: string): SessionActor {
    const pending = idleReleases.get(sessionId);
    if (pending) {
      ctx.timers.delete(pending);
      idleReleases.delete(sessionId);
    }
    let w = actors.get(sessionId);
    if (!w) {
      // An idle actor drops its conversation cache at once, and gives its lease up after
      // `idleReleaseMs`: soon enough that another runtime can take the session's next turn,
      // late enough that a conversation's next turn here needs no new claim.
      w = new SessionActor(ctx, sessionId, (idle) => {
        idle.forgetConversation();
        const release = () => {
          idleReleases.delete(sessionId);
          if (!idle.idle || actors.get(sessionId) !== idle) return;
          actors.delete(sessionId);
          void idle.release();
        };
        idleReleases.set(sessionId, release);
        ctx.timers.set(release, releaseTime(Date.now(), idleReleaseMs));
      });
      actors.set(sessionId, w);
    }
    return w;
  }

  return {
    actors,
    get closed() {
      return closed;
    },
    kick(sessionId: string, session?: SessionRecord): void {
      if (closed) return;
      void actor(sessionId).kick(session);
    },
    startNew(
      sessionId: string,
      session: SessionRecord,
      turn: TurnRecord,
      received: NewEvent[],
    ): Promise<boolean> {
      if (closed) return Promise.resolve(false);
      return actor(sessionId).startNew(session, turn, received);
    },
    stopTaking(): void {
      closed = true;
    },
    async releaseAll(): Promise<void> {
      idleReleases.clear();
      for (const w of actors.values()) w.abandon();
      await Promise.all([...actors.values()].map((w) => w.kick().then(() => w.release())));
    },
  };
}

/**
 * When an idle lease is given up: `idleReleaseMs` after the turn, rounded up to a grid of a
 * tenth of it (at most 100 ms), so the releases of sessions that went idle close together fall
 * due at one moment and a store can send them in one statement (store-postgres does).
 */
export function releaseTime(now: number, idleReleaseMs: number): number {
  const grid = Math.min(100, Math.floor(idleReleaseMs / 10));
  const at = now + idleReleaseMs;
  return grid < 1 ? at : Math.ceil(at / grid) * grid;
}
