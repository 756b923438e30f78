// The dispatcher: turns outbox rows into delivery records (one per matching subscription, made
// idempotent by the store's unique index), then claims due deliveries under a lease and posts
// them. Any number of processes may run one on the same store: a claim is taken by one guarded
// UPDATE, so two never attempt one delivery at once, and a claim whose process died lapses and
// is taken over. Attempts run concurrently, each bounded by its timeout, so a slow or failing
// receiver holds up no other subscription's (each has at most `perSubscription` in flight); nothing here runs on a session's write path.
import type { AttemptOutcome, DeliveryRow, DeliveryStore } from "@opencomputer/runtime";
import { newId } from "@opencomputer/runtime";
import { attemptDelivery, type FetchLike } from "./attempt.ts";
import { deliveryData } from "./body.ts";
import { MAX_ATTEMPTS, retryDelay, verdict } from "./retry.ts";

export interface DispatcherOptions {
  store: DeliveryStore;
  /** Names this process in the claims it holds. */
  holder: string;
  clock?: () => number;
  fetch?: FetchLike;
  /** No answer within this long is a `timeout` (default 10 s). */
  timeoutMs?: number;
  /** How long a claim protects an attempt in progress (default timeout + 20 s). */
  claimMs?: number;
  /** Most attempts in flight in this process (default 32). */
  maxInFlight?: number;
  /** Most attempts in flight for one subscription, across processes (default 4). */
  perSubscription?: number;
  /** The background loop's interval (default 500 ms). */
  pollMs?: number;
  onError?: (error: unknown) => void;
}

export class EventDispatcher {
  private readonly now: () => number;
  private readonly fetch: FetchLike;
  private readonly timeoutMs: number;
  private readonly claimMs: number;
  private readonly maxInFlight: number;
  private readonly inFlight = new Set<Promise<void>>();
  private timer: ReturnType<typeof setTimeout> | null = null;
  private stopped = true;

  constructor(private readonly options: DispatcherOptions) {
    this.now = options.clock ?? Date.now;
    this.fetch = options.fetch ?? ((url, init) => fetch(url, init));
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.claimMs = options.claimMs ?? this.timeoutMs + 20_000;
    this.maxInFlight = options.maxInFlight ?? 32;
  }

  /** Records the deliveries of every event in the outbox; how many it recorded. */
  async fanOut(limit = 100): Promise<number> {
    const { store } = this.options;
    let recorded = 0;
    for (const event of await store.outbox(limit)) {
      const subs = await store.matchingSubscriptions(event);
      if (subs.length > 0) {
        const text =
          event.type === "turn.completed" && event.turnId !== null
            ? await store.turnResultText(event.sessionId, event.turnId)
            : null;
        const data = deliveryData(event, text);
        for (const sub of subs) {
          const now = this.now();
          const inserted = await store.insertDelivery({
            id: newId("dlv", now),
            subscriptionId: sub.id,
            eventId: event.eventId,
            eventType: event.type,
            sequence: event.sequence,
            occurredAt: event.occurredAt,
            projectId: event.projectId!,
            environment: event.environment!,
            agentId: event.agentId!,
            deploymentId: event.deploymentId!,
            sessionId: event.sessionId,
            turnId: event.turnId ?? "",
            data,
            replayOf: null,
            createdAt: new Date(now).toISOString(),
            nextAttemptMs: now,
          });
          if (inserted) recorded++;
        }
      }
      await store.removeOutbox(event.rid);
    }
    return recorded;
  }

  /** Claims what is due (up to the free slots) and starts its attempts; resolves when started. */
  async launchDue(): Promise<Promise<void>[]> {
    const free = this.maxInFlight - this.inFlight.size;
    if (free <= 0) return [];
    const now = this.now();
    const claimed = await this.options.store.claimDue(
      this.options.holder,
      now,
      now + this.claimMs,
      free,
      this.options.perSubscription ?? 4,
    );
    return claimed.map((row) => {
      const running = this.attempt(row).catch((error) => this.report(error));
      this.inFlight.add(running);
      void running.finally(() => this.inFlight.delete(running));
      return running;
    });
  }

  /** One pass: fan out, then attempt what is due and wait for those attempts. */
  async runOnce(): Promise<number> {
    await this.fanOut();
    const started = await this.launchDue();
    await Promise.all(started);
    return started.length;
  }

  private async attempt(row: DeliveryRow): Promise<void> {
    const { store, holder } = this.options;
    const sub = await store.getSubscription(row.subscriptionId);
    const at = () => new Date(this.now()).toISOString();
    if (!sub) {
      await store.finishAttempt(row.id, holder, {
        status: "failed",
        responseStatus: null,
        error: "subscription_deleted",
        lastAttemptAt: at(),
        deliveredAt: null,
        nextAttemptMs: null,
      });
      return;
    }
    const result = await attemptDelivery(row, sub, {
      fetch: this.fetch,
      now: this.now(),
      timeoutMs: this.timeoutMs,
    });
    const now = this.now();
    const v = verdict(result, now);
    const base = {
      responseStatus: result.kind === "response" ? result.status : null,
      lastAttemptAt: new Date(now).toISOString(),
    };
    let outcome: AttemptOutcome;
    if (v.settle === "delivered")
      outcome = {
        ...base,
        status: "delivered",
        error: null,
        deliveredAt: base.lastAttemptAt,
        nextAttemptMs: null,
      };
    else if (v.settle === "failed")
      outcome = {
        ...base,
        status: "failed",
        error: v.error,
        deliveredAt: null,
        nextAttemptMs: null,
      };
    else if (row.attempt >= MAX_ATTEMPTS)
      outcome = {
        ...base,
        status: "failed",
        error: `retry_exhausted: ${v.error}`,
        deliveredAt: null,
        nextAttemptMs: null,
      };
    else
      outcome = {
        ...base,
        status: "pending",
        error: v.error,
        deliveredAt: null,
        nextAttemptMs: now + (v.retryAfterMs ?? retryDelay(row.attempt)),
      };
    await store.finishAttempt(row.id, holder, outcome);
  }

  private report(error: unknown): void {
    (
      this.options.onError ??
      ((e) =>
        console.error(
          JSON.stringify({ level: "error", message: "event delivery failed", error: String(e) }),
        ))
    )(error);
  }

  /** Runs fan-out and launches attempts every `pollMs` until `stop`. */
  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    const loop = async () => {
      try {
        await this.fanOut();
        await this.launchDue();
      } catch (error) {
        this.report(error);
      }
      if (!this.stopped) this.timer = setTimeout(loop, this.options.pollMs ?? 500);
    };
    void loop();
  }

  /** Stops the loop and waits for the attempts in flight. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await Promise.all([...this.inFlight]);
  }
}
