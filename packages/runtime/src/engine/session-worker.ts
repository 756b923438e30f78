import type { LoadedAgent } from "../agents/resolver.ts";
import { type Deferred, deferred } from "../deferred.ts";
import { newId } from "../ids.ts";
import { StoreError } from "../store/errors.ts";
import type { NewEvent, WriteOp } from "../store/port.ts";
import type { Lease, SessionRecord, TurnRecord } from "../store/records.ts";
import { type EngineContext, write } from "./context.ts";
import { Conversation, inputToContent } from "./conversation.ts";
import { isFenceRefusal } from "./refusal.ts";
import { type Settlement, settleTurn } from "./settle.ts";
import { runTurn } from "./turn-loop.ts";
import type { TurnScope } from "./turn-scope.ts";

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
 * Runs one session's turns, one at a time, under the session's lease. At most one worker per
 * session exists in a process; the lease keeps other processes out (invariant 2).
 */
export class SessionWorker {
  private running: Promise<void> | null = null;
  private again = false;
  private lease: Lease | null = null;
  private conversation: Conversation | null = null;
  private active: {
    scope: TurnScope;
    controller: AbortController;
    cancel: CancelRequest | null;
  } | null = null;
  private renewTimer: NodeJS.Timeout | null = null;
  private readonly steering = { pending: false };
  private stopped = false;

  constructor(
    private readonly ctx: EngineContext,
    readonly sessionId: string,
    /** Called when the worker has no work left, so the runtime can forget it. */
    private readonly onIdle: (worker: SessionWorker) => void = () => {},
  ) {}

  get activeTurnId(): string | undefined {
    return this.active?.scope.turn.id;
  }

  get idle(): boolean {
    return this.running === null;
  }

  /** Makes sure the worker looks for work; resolves when it has none left. */
  kick(): Promise<void> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = this.loop()
      .catch((error) =>
        this.ctx.log.error("session worker failed", {
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
   * Cancels the turn this worker runs: aborts its signal, gives running tools `cancelGraceMs` to
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
      active.controller.abort(new Error(`turn ${settlement.reason}`));
    }
    return active.cancel.done.promise;
  }

  /** Stops the running turn without settling it (the process is closing; recovery resumes it). */
  abandon(): void {
    this.stopped = true;
    this.active?.controller.abort(new Error("runtime closing"));
  }

  /** Gives up the lease; a no-op while the worker runs (it releases when it goes idle). */
  async release(): Promise<void> {
    if (this.running) return;
    this.stopRenewing();
    if (this.lease) await this.ctx.store.releaseLease(this.sessionId, this.lease).catch(() => {});
    this.lease = null;
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      this.again = false;
      const session = await this.ctx.store.getSession(this.sessionId);
      if (!session || session.status === "ended") return;
      const next = pickNextTurn(await this.ctx.store.listTurns(this.sessionId));
      if (!next) return;
      const lease = await this.ensureLease();
      if (!lease) return;
      await this.run(session, next, lease);
    }
  }

  /**
   * Takes or extends the lease before every turn. Asking the store each time (rather than trusting
   * the copy in memory) is what stops a runtime that lost its session from trying again and again.
   */
  private async ensureLease(): Promise<Lease | null> {
    const lease = await this.ctx.store.acquireLease(
      this.sessionId,
      this.ctx.runtimeId,
      this.ctx.leaseMs,
    );
    if (!lease || lease.epoch !== this.lease?.epoch) this.conversation = null;
    this.lease = lease;
    return lease;
  }

  private async run(session: SessionRecord, turn: TurnRecord, lease: Lease): Promise<void> {
    const fence = { runtimeId: this.ctx.runtimeId, epoch: lease.epoch };
    let current = turn;
    try {
      if (current.status === "running") current = await this.requeue(current, fence);
      this.conversation ??= Conversation.from(
        await this.ctx.store.listMessages(this.sessionId),
        await this.ctx.store.listToolCalls(this.sessionId),
      );
      current = await this.start(session, current, fence);
    } catch (error) {
      if (isFenceRefusal(error)) {
        this.conversation = null;
        return;
      }
      throw error;
    }
    const controller = new AbortController();
    const scope: TurnScope = {
      ctx: this.ctx,
      sessionId: this.sessionId,
      agentId: session.agentId,
      deploymentId: session.deploymentId,
      turn: current,
      fence,
      signal: controller.signal,
      conversation: this.conversation,
      inflight: new Set(),
      steering: this.steering,
    };
    this.active = { scope, controller, cancel: null };
    this.startRenewing(controller);
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

  /** A turn left `running` by a runtime that died: record the loss and queue it again. */
  private async requeue(
    turn: TurnRecord,
    fence: { runtimeId: string; epoch: number },
  ): Promise<TurnRecord> {
    await write(this.ctx, this.sessionId, {
      fence,
      expectTurn: { id: turn.id, status: ["running"] },
      ops: [{ type: "turn.update", id: turn.id, patch: { status: "queued" } }],
      events: [
        {
          type: "runtime.disconnected",
          data: { requeuedTurnIds: [turn.id], runtimeId: this.ctx.runtimeId },
        },
        { type: "turn.queued", turnId: turn.id, data: { mode: turn.mode, requeued: true } },
      ],
    });
    return { ...turn, status: "queued" };
  }

  private async start(
    session: SessionRecord,
    turn: TurnRecord,
    fence: { runtimeId: string; epoch: number },
  ) {
    const conversation = this.conversation!;
    const now = new Date().toISOString();
    const ops: WriteOp[] = [
      {
        type: "turn.update",
        id: turn.id,
        patch: { status: "running", startedAt: turn.startedAt ?? now },
      },
    ];
    const events: NewEvent[] = [
      { type: "turn.started", turnId: turn.id, data: turn.startedAt ? { resumed: true } : {} },
    ];
    if (session.status !== "running") {
      ops.push({ type: "session.update", patch: { status: "running" } });
      events.push({
        type: "session.status_changed",
        data: { from: session.status, to: "running" },
      });
    }
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
    if (message) ops.push({ type: "message.insert", message });
    try {
      await write(this.ctx, this.sessionId, {
        fence,
        expectTurn: { id: turn.id, status: ["queued"] },
        expectSession: { status: [session.status] },
        ops,
        events,
      });
    } catch (error) {
      // The session changed under us (another turn settled, or it ended): the loop reads again.
      if (error instanceof StoreError && error.code === "session_state") this.again = true;
      throw error;
    }
    if (message) conversation.addMessage(message);
    return { ...turn, status: "running" as const, startedAt: turn.startedAt ?? now };
  }

  private async loadAgent(scope: TurnScope, session: SessionRecord): Promise<LoadedAgent | null> {
    try {
      return await this.ctx.agents.load(session.agentId, session.deploymentId);
    } catch (error) {
      this.ctx.log.error("deployment failed to load", {
        sessionId: this.sessionId,
        error: String(error),
      });
      await settleTurn(
        this.ctx,
        scope.turn,
        {
          status: "failed",
          error: {
            code: "deployment_invalid",
            message: `Deployment ${session.deploymentId} failed to load`,
          },
        },
        { fence: scope.fence },
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
        sessionStatus: cancel.sessionStatus,
      });
      cancel.done.resolve(settled);
    } catch (error) {
      cancel.done.reject(error);
    }
  }

  private startRenewing(controller: AbortController) {
    this.stopRenewing();
    const every = Math.max(10, Math.floor(this.ctx.leaseMs / 3));
    this.renewTimer = setInterval(async () => {
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
        controller.abort(new Error("lease lost"));
      }
    }, every);
    this.renewTimer.unref();
  }

  private stopRenewing() {
    if (this.renewTimer) clearInterval(this.renewTimer);
    this.renewTimer = null;
  }
}
