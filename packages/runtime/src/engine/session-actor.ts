import { OpenComputerError } from "@opencomputer/agent";
import { isoNow } from "../clock.ts";
import { type Deferred, deferred } from "../deferred.ts";
import { newId } from "../ids.ts";
import type { LoadedAgent } from "../ports/agent-resolver.ts";
import type { Lease, SessionRecord, TurnRecord } from "../ports/records.ts";
import type { NewEvent } from "../ports/store.ts";
import { ASK_ID } from "./ask.ts";
import type { EngineContext } from "./context.ts";
import { Conversation, inputToContent } from "./conversation.ts";
import { expireIfDead } from "./dead-holders.ts";
import { isFenceRefusal } from "./refusal.ts";
import { type Settlement, settleTurn } from "./settle.ts";
import { runTurn } from "./turn-loop.ts";
import { type TurnScope, traceOf } from "./turn-scope.ts";
import { turnStartWrite } from "./turn-start.ts";
import { settles } from "./wait.ts";

interface CancelRequest {
  settlement: Extract<Settlement, { status: "cancelled" }>;
  sessionStatus: "idle" | "ended";
  done: Deferred<boolean>;
}

/** The next turn to run: one a dead runtime left running, then interrupts, then oldest queued. */
export function pickNextTurn(turns: TurnRecord[]): TurnRecord | undefined {
  return (
    turns.find((t) => t.status === "running") ??
    turns.find((t) => t.status === "queued" && t.mode === "interrupt") ??
    turns.find((t) => t.status === "queued")
  );
}

/**
 * Runs one session's turns, one at a time, under the session's lease. At most one actor per
 * session exists in a process; the lease keeps other processes out (invariant 2).
 */
export class SessionActor {
  private running: Promise<void> | null = null;
  private again = false;
  private lease: Lease | null = null;
  private conversation: Conversation | null = null;
  private active: {
    scope: TurnScope;
    abort: (reason: Error) => void;
    cancel: CancelRequest | null;
  } | null = null;
  /** The pending lease renewal (a deadline in ctx.timers), while a turn runs. */
  private renewal: (() => void) | null = null;
  private readonly steering = { pending: false };
  private stopped = false;
  /** The session as the kick's caller read it, used once by the loop's next look. */
  private hint: SessionRecord | null = null;
  private claimed: string | undefined;

  constructor(
    private readonly ctx: EngineContext,
    readonly sessionId: string,
    /** Called when the actor has no work left, so the runtime can forget it. */
    private readonly onIdle: (actor: SessionActor) => void = () => {},
  ) {}

  get activeTurnId(): string | undefined {
    return this.active?.scope.turn.id;
  }

  /**
   * The turn this actor claimed and runs, from the moment its start committed (before the
   * caller that queued it hears back) until its terminal event is published in this process.
   */
  get claimedTurnId(): string | undefined {
    return this.claimed;
  }

  get idle(): boolean {
    return this.running === null;
  }

  /**
   * Makes sure the actor looks for work; resolves when it has none left. `session` is the
   * session as the caller just read it (sendTurn does): an idle actor starts from it instead of
   * reading it again. A stale copy costs nothing but a retry, since the turn's start is guarded
   * by the session's status and the lease.
   */
  kick(session?: SessionRecord): Promise<void> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.hint = session ?? null;
    return this.launch(() => this.loop());
  }

  /**
   * sendTurn's fast path: inserts a new turn already started, in the write that claims the
   * session's lease, then runs it and looks for more work like `kick`. One write instead of two
   * (queue, then start), and no look at the turns in between. Resolves true once the turn is
   * started here; false when this actor is busy or the claim was refused (another runtime holds
   * the session, or the session changed since `session` was read), and nothing was written: the
   * caller queues the turn as usual. Rejects with the write's error otherwise (a duplicate
   * idempotency key).
   */
  startNew(session: SessionRecord, turn: TurnRecord, received: NewEvent[]): Promise<boolean> {
    if (this.running || this.stopped) return Promise.resolve(false);
    const outcome = deferred<boolean>();
    void this.launch(async () => {
      let started: Awaited<ReturnType<SessionActor["start"]>>;
      try {
        started = await this.start(session, turn, received);
      } catch (error) {
        outcome.reject(error);
        return;
      }
      outcome.resolve(started !== null);
      // Nothing was active when the turn was inserted running: unless something was queued
      // since (which kicks this actor), there is nothing to look for once it settled.
      if (started && (await this.run(session, started.turn, started.fence)) && !this.again) return;
      await this.loop();
    });
    return outcome.promise;
  }

  private launch(body: () => Promise<void>): Promise<void> {
    this.running = body()
      .catch((error) =>
        this.ctx.log.error("session actor failed", {
          sessionId: this.sessionId,
          error: String(error),
        }),
      )
      .finally(() => {
        this.running = null;
        if (this.again && !this.stopped) void this.kick();
        else this.onIdle(this);
        this.again = false;
      });
    return this.running;
  }

  noteSteering(): void {
    this.steering.pending = true;
  }

  /**
   * Cancels the turn this actor runs: aborts its signal, gives running tools `cancelGraceMs` to
   * honour it, then settles the turn. Resolves false when the turn is not running here.
   */
  cancel(
    turnId: string,
    settlement: CancelRequest["settlement"],
    sessionStatus: "idle" | "ended",
  ): Promise<boolean> {
    const active = this.active;
    if (!active || active.scope.turn.id !== turnId) return Promise.resolve(false);
    if (!active.cancel) {
      active.cancel = { settlement, sessionStatus, done: deferred<boolean>() };
      active.abort(new Error(`turn ${settlement.reason}`));
    }
    return active.cancel.done.promise;
  }

  /** Stops the running turn without settling it (the process is closing; recovery resumes it). */
  abandon(): void {
    this.stopped = true;
    this.active?.abort(new Error("runtime closing"));
  }

  private async loadConversation(): Promise<Conversation> {
    const [messages, calls] = await Promise.all([
      this.ctx.store.listMessages(this.sessionId),
      this.ctx.store.listToolCalls(this.sessionId),
    ]);
    return Conversation.from(messages, calls);
  }

  forgetConversation(): void {
    this.conversation = null;
  }

  /** Gives up the lease; a no-op while the actor runs. */
  async release(): Promise<void> {
    if (this.running) return;
    this.stopRenewing();
    if (this.lease) await this.ctx.store.releaseLease(this.sessionId, this.lease).catch(() => {});
    this.lease = null;
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      this.again = false;
      const hint = this.hint;
      this.hint = null;
      // The turns first: with none to run, the session itself need not be read.
      const active = await this.ctx.store.listActiveTurns(this.sessionId);
      const next = pickNextTurn(active);
      if (!next) return;
      const session = hint ?? (await this.ctx.store.getSession(this.sessionId));
      if (!session || session.status === "ended") return;
      // Another live runtime holds the session and heard the same signal: leave it the turn.
      // A holder this machine knows is dead is not waited out: its leases end, read again.
      const held = session.lease;
      if (held && held.runtimeId !== this.ctx.runtimeId && held.expiresAt > Date.now()) {
        if ((await expireIfDead(this.ctx, held.runtimeId)).length > 0) continue;
        this.lease = null;
        this.conversation = null;
        return;
      }
      const started = await this.start(session, next);
      if (!started) return;
      const settled = await this.run(session, started.turn, started.fence);
      // The turn settled here, no other turn was waiting, and nothing queued since: every
      // queued turn kicks its session's actor (sendTurn in this process; another process's
      // notification of work, or a resync), so there is nothing to read. A turn that ended any
      // other way (the lease lost, the process closing) is looked at again.
      if (settled && active.length === 1 && !this.again) return;
    }
  }

  /**
   * Starts a turn with the write that also takes (or extends) the session's lease. Claiming the
   * session in the store before every turn, rather than trusting the lease in memory, is what
   * stops a runtime that lost its session from trying again and again. A turn a dead runtime
   * left `running` is re-queued (`runtime.disconnected`) and resumed in the same write.
   * Returns null when another runtime holds the session or the turn is no longer ours to start.
   */
  private async start(session: SessionRecord, turn: TurnRecord, received?: NewEvent[]) {
    // The cached conversation is only trusted while this actor's lease has been live throughout.
    if (!this.lease || this.lease.expiresAt <= Date.now()) this.conversation = null;
    // A session that never started a turn has no conversation to read (its status says so, and
    // the claim's status guard holds it to that).
    this.conversation ??=
      session.status === "new" ? Conversation.from([], []) : await this.loadConversation();
    const conversation = this.conversation;
    const now = isoNow();
    const message = conversation.hasTurnMessage(turn.id)
      ? null
      : {
          id: newId("msg"),
          sessionId: this.sessionId,
          turnId: turn.id,
          role: "user" as const,
          content: inputToContent(turn.input),
          createdAt: now,
        };
    const { ops, events } = turnStartWrite(session, turn, {
      received,
      message,
      runtimeId: this.ctx.runtimeId,
      now,
    });
    let claimed: Awaited<ReturnType<EngineContext["store"]["applyWithLease"]>>;
    try {
      claimed = await this.ctx.store.applyWithLease(
        this.sessionId,
        this.ctx.runtimeId,
        this.ctx.leaseMs,
        {
          ...(received ? {} : { expectTurn: { id: turn.id, status: [turn.status] } }),
          expectSession: { status: [session.status] },
          ops,
          events,
        },
      );
    } catch (error) {
      if (!isFenceRefusal(error)) throw error;
      // The session or turn changed under us (a turn settled, it ended): the loop reads again.
      this.conversation = null;
      this.again = true;
      return null;
    }
    if (!claimed) {
      this.lease = null;
      this.conversation = null;
      return null;
    }
    // A runtime whose lease expired can still write until someone takes over (the fence is
    // the epoch). So after taking over from another runtime, what was read before the claim —
    // the conversation and the turn's step count — is read again.
    let started: TurnRecord = { ...turn, status: "running", startedAt: turn.startedAt ?? now };
    const previous = session.lease;
    if (previous && previous.runtimeId !== this.ctx.runtimeId) {
      this.conversation = await this.loadConversation();
      const fresh = await this.ctx.store.getTurn(this.sessionId, turn.id);
      if (fresh) started = fresh;
    } else if (message) {
      conversation.addMessage(message);
    }
    this.lease = claimed.lease;
    this.ctx.notifier.publish(this.sessionId, claimed.events);
    const fence = { runtimeId: this.ctx.runtimeId, epoch: claimed.lease.epoch };
    return { turn: started, fence };
  }

  /** Runs a claimed turn; resolves true when this process committed its settlement. */
  private async run(
    session: SessionRecord,
    current: TurnRecord,
    fence: { runtimeId: string; epoch: number },
  ): Promise<boolean> {
    this.claimed = current.id;
    let settled = false;
    // Cleared as the terminal event is published, not when the run returns: a wait that
    // begins in between must read the turn, as the event it would wait for has passed.
    const unsubscribe = this.ctx.notifier.subscribe(this.sessionId, (events) => {
      if (!settles(events, current.id)) return;
      settled = true;
      if (this.claimed === current.id) this.claimed = undefined;
    });
    try {
      await this.runClaimed(session, current, fence);
    } finally {
      unsubscribe();
      if (this.claimed === current.id) this.claimed = undefined;
    }
    return settled;
  }

  private async runClaimed(
    session: SessionRecord,
    current: TurnRecord,
    fence: { runtimeId: string; epoch: number },
  ) {
    // Every abort of the turn goes through `abort`, which also settles `aborted`: waits race that
    // promise instead of adding a listener to the signal (about 6-12 µs each on Node 20).
    const controller = new AbortController();
    const aborted = deferred<void>();
    const abort = (reason: Error) => {
      controller.abort(reason);
      aborted.resolve();
    };
    const scope: TurnScope = {
      creation: await this.ctx.creations.of(this.ctx.store, this.sessionId),
      ctx: this.ctx,
      sessionId: this.sessionId,
      agentId: session.agentId,
      deploymentId: session.deploymentId,
      source: session.source,
      executionMode: session.executionMode,
      turn: current,
      fence,
      signal: controller.signal,
      aborted: aborted.promise,
      conversation: this.conversation!,
      builtInToolIds:
        session.executionMode === "microvm"
          ? this.ctx.builtInToolIds.filter((id) => id !== ASK_ID)
          : this.ctx.builtInToolIds,
      inflight: new Set(),
      steering: this.steering,
    };
    this.active = { scope, abort, cancel: null };
    this.startRenewing(abort);
    try {
      const agent = await this.loadAgent(scope, session);
      if (agent) await runTurn(scope, agent);
    } finally {
      this.stopRenewing();
      const cancel = this.active?.cancel;
      if (cancel) await this.finishCancel(scope, cancel);
      this.active = null;
    }
  }

  private async loadAgent(scope: TurnScope, session: SessionRecord): Promise<LoadedAgent | null> {
    try {
      return await this.ctx.agents.load(session.agentId, session.deploymentId);
    } catch (error) {
      this.ctx.log.error("deployment failed to load", {
        sessionId: this.sessionId,
        error: String(error),
      });
      // A deployment the load-time check refused names the tool at fault; that much is public.
      const tool = error instanceof OpenComputerError ? error.details.tool : undefined;
      const named =
        typeof tool === "string" && (error as OpenComputerError).code === "deployment_invalid";
      await settleTurn(
        this.ctx,
        scope.turn,
        {
          status: "failed",
          error: {
            code: "deployment_invalid",
            message: named
              ? (error as Error).message
              : `Deployment ${session.deploymentId} failed to load`,
            ...(typeof tool === "string" ? { tool } : {}),
          },
        },
        { fence: scope.fence, trace: traceOf(scope) },
      );
      return null;
    }
  }

  private async finishCancel(scope: TurnScope, cancel: CancelRequest) {
    try {
      if (scope.inflight.size > 0) {
        let timer: NodeJS.Timeout | undefined;
        const grace = new Promise<void>((resolve) => {
          timer = setTimeout(resolve, this.ctx.cancelGraceMs);
        });
        await Promise.race([Promise.allSettled([...scope.inflight]), grace]);
        clearTimeout(timer);
      }
      const settled = await settleTurn(this.ctx, scope.turn, cancel.settlement, {
        fence: scope.fence,
        trace: traceOf(scope),
        sessionStatus: cancel.sessionStatus,
      });
      cancel.done.resolve(settled);
    } catch (error) {
      cancel.done.reject(error);
    }
  }

  /** Renews the lease every leaseMs / 3 while the turn runs (a deadline, see deadlines.ts). */
  private startRenewing(abort: (reason: Error) => void) {
    this.stopRenewing();
    const every = Math.max(10, Math.floor(this.ctx.leaseMs / 3));
    const renew = async () => {
      if (this.renewal !== renew) return;
      this.ctx.timers.set(renew, Date.now() + every);
      const lease = this.lease;
      if (!lease) return;
      const renewed = await this.ctx.store
        .renewLease(this.sessionId, lease, this.ctx.leaseMs)
        .catch(() => null);
      if (renewed) {
        this.lease = renewed;
      } else if (this.lease === lease) {
        // Another runtime owns the session now; everything this one would write is refused anyway.
        this.lease = null;
        this.conversation = null;
        abort(new Error("lease lost"));
      }
    };
    this.renewal = renew;
    this.ctx.timers.set(renew, Date.now() + every);
  }

  private stopRenewing() {
    if (this.renewal) this.ctx.timers.delete(this.renewal);
    this.renewal = null;
  }
}
