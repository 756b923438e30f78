// One worker process, seen from the control plane: started with an explicit minimal
// environment and its limits (worker-spawn.ts), a handshake that gives it a random token
// (worker-handshake.ts), and then calls matched to their outcomes by id and key. A worker that
// exits, misses heartbeats, or keeps a call past its deadline is killed and every call still
// open on it fails with WorkerLostError.

import type { ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import type { JsonValue } from "@opencomputer/agent";
import { RenderError } from "@opencomputer/agent/internal";
import type { AgentLocation } from "@opencomputer/runtime";
import { type CodeOutcome, type RenderedAgent, WorkerLostError } from "@opencomputer/runtime";
import type { GatewayBridge } from "./gateway-bridge.ts";
import { type ParentMessage, type WireError, type WorkerMessage, wellFormed } from "./protocol.ts";
import type { WorkerLauncher } from "./worker-command.ts";
import { exitReason, isMemoryReason } from "./worker-exit.ts";
import { killGroup, type WorkerGroup, type WorkerGroups } from "./worker-groups.ts";
import { handshake } from "./worker-handshake.ts";
import { DEFAULT_WORKER_LIMITS, type WorkerLimits } from "./worker-limits.ts";
import { spawnWorker } from "./worker-spawn.ts";
import { IDLE_REASON, type WorkerTimings } from "./worker-timings.ts";

export {
  CHILD_SCRIPT,
  TSX_LOADER,
  type WorkerCommand,
  type WorkerLauncher,
} from "./worker-command.ts";
export { DEFAULT_TIMINGS, IDLE_REASON, type WorkerTimings } from "./worker-timings.ts";

export interface WorkerStart {
  location: AgentLocation;
  timings: WorkerTimings;
  env: Record<string, string>;
  launcher?: WorkerLauncher;
  /** Whether a sandboxed worker keeps the host's network (false by default, and for microvm). */
  network?: boolean;
  /** Carries egress to a loopback gateway into a worker without network. */
  bridge?: GatewayBridge;
  limits?: WorkerLimits;
  /** Where the worker's control group is made; without it the worker has none. */
  groups?: WorkerGroups;
  /** Told once when the worker is gone, with why. */
  onLost?: (reason: string) => void;
  /** Told of each message refused: one naming no open call of this worker, or the wrong key. */
  onRefused?: (what: string) => void;
}

type CallKind = ParentMessage["type"];

interface Pending {
  kind: CallKind;
  /** Random per call: a message about this call must carry it. */
  key: string;
  /** The tool a run / preview / apply calls (for the memory-limit outcome). */
  tool?: string;
  resolve(value: unknown): void;
  reject(error: Error): void;
  timer: NodeJS.Timeout;
  onProgress?: (metadata: JsonValue) => Promise<void>;
  /** Told, as the outcome arrives, of the render the worker makes next (see `invoke`). */
  onNextRender?: (next: Promise<NextRender | undefined>) => void;
}

/** The render a worker made after a call, or its failure; undefined when it never came. */
export type NextRender = { render: RenderedAgent } | { error: Error };

interface AwaitedRender {
  key: string;
  resolve(next: NextRender | undefined): void;
  timer: NodeJS.Timeout;
}

type CallMessage = Extract<ParentMessage, { type: "run" | "preview" | "apply" }>;

export class WorkerProcess {
  /** The worker's pid once it is initialized, as the worker sees it (inside a sandbox too). */
  pid = 0;
  lost: string | null = null;
  private readonly child: ChildProcess;
  private readonly group: WorkerGroup | undefined;
  private readonly limits: WorkerLimits;
  private readonly token = randomBytes(32).toString("hex");
  private readonly pending = new Map<number, Pending>();
  private readonly nextRenders = new Map<number, AwaitedRender>();
  private nextId = 1;
  private lastBeat = Date.now();
  private lastCall = Date.now();
  private watchdog: NodeJS.Timeout | undefined;
  readonly ready: Promise<void>;

  constructor(private readonly start: WorkerStart) {
    const { location, timings } = start;
    this.limits = start.limits ?? DEFAULT_WORKER_LIMITS;
    const spawned = spawnWorker({
      location,
      env: start.bridge ? { ...start.env, OC_GATEWAY_BRIDGE: start.bridge.dir } : start.env,
      limits: this.limits,
      network: start.network ?? false,
      ...(start.launcher ? { launcher: start.launcher } : {}),
      ...(start.bridge ? { bridgeDir: start.bridge.dir } : {}),
      ...(start.groups ? { groups: start.groups } : {}),
    });
    this.child = spawned.child;
    this.group = spawned.group;
    const started = handshake({
      child: this.child,
      token: this.token,
      location,
      timings,
      post: (message) => this.post(message),
      kill: (reason) => this.kill(reason),
    });
    this.ready = Promise.all([started, spawned.admitted]).then(([pid]) => {
      this.pid = pid;
      this.child.on("message", (m: unknown) => this.onMessage(m));
      this.startWatchdog();
      this.holdOpen(false);
    });
    this.ready.catch(() => {});
    spawned.admitted.catch((error: Error) => this.kill(error.message));
    this.child.once("exit", (code, signal) => {
      const reason = exitReason(code, signal, this.group, spawned.stderrTail(), this.limits);
      this.onExit(reason);
      this.releaseGroup();
    });
    this.child.on("error", () => this.onExit("could not be started"));
  }

  render(request: RenderedAgent["request"]): Promise<RenderedAgent> {
    return this.call<RenderedAgent>(
      (id, key) => ({ type: "render", id, key, request: wireRequest(request) }),
      { kind: "render" },
      this.start.timings.renderDeadlineMs,
    );
  }

  /**
   * run / preview / apply: the message without its id and key, the progress sink, the abort
   * signal. With `onNextRender` (a run only), the worker renders the call's render request again
   * right after the outcome, and `onNextRender` gets that render's promise before the outcome
   * resolves.
   */
  async invoke(
    message: DistributiveOmit<CallMessage, "id" | "key">,
    signal: AbortSignal,
    onProgress?: (metadata: JsonValue) => Promise<void>,
    onNextRender?: (next: Promise<NextRender | undefined>) => void,
  ): Promise<CodeOutcome> {
    const { bridge } = this.start;
    if (message.egress && bridge) await bridge.prepare(message.egress.gatewayUrl);
    let id = 0;
    const onAbort = () =>
      this.post({ type: "abort", id, reason: String(signal.reason?.message ?? "aborted") });
    const result = this.call<CodeOutcome>(
      (n, key) => {
        id = n;
        const renderAfter = onNextRender && message.type === "run" ? { renderAfter: true } : {};
        return { ...message, id: n, key, ...renderAfter } as ParentMessage;
      },
      {
        kind: message.type,
        tool: message.tool,
        ...(onProgress ? { onProgress } : {}),
        ...(onNextRender ? { onNextRender } : {}),
      },
      this.start.timings.callDeadlineMs,
    );
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });
    return result.finally(() => signal.removeEventListener("abort", onAbort));
  }

  /** The pid of the process started (bwrap, when sandboxed), as the host sees it. */
  get hostPid(): number | undefined {
    return this.child.pid;
  }

  /** The worker's control group directories, when it has one (diagnostics and tests). */
  get groupPaths(): string[] {
    return this.group?.paths ?? [];
  }

  kill(reason: string): void {
    if (!this.lost) this.onExit(reason);
    this.child.kill("SIGKILL");
    // A plain worker's own children are not in a pid namespace that dies with it.
    if (this.group) killGroup(this.group);
  }

  private call<T>(
    build: (id: number, key: string) => ParentMessage,
    call: Omit<Pending, "key" | "resolve" | "reject" | "timer">,
    deadlineMs: number,
  ): Promise<T> {
    if (this.lost) return Promise.reject(new WorkerLostError(`The agent's worker ${this.lost}`));
    const id = this.nextId++;
    const key = randomBytes(16).toString("hex");
    this.lastCall = Date.now();
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(
        () => this.kill(`was stopped: a call took longer than its deadline of ${deadlineMs} ms`),
        deadlineMs,
      );
      this.holdOpen(true);
      this.pending.set(id, {
        ...call,
        key,
        resolve: resolve as (value: unknown) => void,
        reject,
        timer,
      });
      this.post(build(id, key));
    });
  }

  private onMessage(raw: unknown): void {
    // Only the process we started, speaking with the token we gave it, is heard; and since code
    // in that process can write to the channel, a message must also be well formed and name an
    // open call of this worker with that call's key.
    if (!wellFormed(raw) || !("token" in raw) || raw.token !== this.token) return;
    const message = raw;
    this.lastBeat = Date.now();
    if (message.type === "heartbeat" || !("id" in message)) return;
    if (message.type === "next_render") {
      const next = this.nextRenders.get(message.id);
      if (next?.key !== message.key) {
        this.refuse(message);
        return;
      }
      this.settleNextRender(
        message.id,
        message.render
          ? { render: message.render }
          : { error: renderFailure(message.error ?? { name: "Error", message: "no render" }) },
      );
      return;
    }
    const call = this.pending.get(message.id);
    if (call?.key !== message.key || !fits(call.kind, message.type)) {
      this.refuse(message);
      return;
    }
    if (message.type === "progress") {
      this.onProgress(call, message);
      return;
    }
    this.pending.delete(message.id);
    if (this.pending.size === 0) this.holdOpen(false);
    clearTimeout(call.timer);
    if (message.type === "rendered") call.resolve(message.render);
    else if (message.type === "outcome") {
      if (call.onNextRender) call.onNextRender(this.awaitNextRender(message.id, call.key));
      call.resolve(message.outcome);
    } else if (message.type === "render_failed") call.reject(renderFailure(message.error));
  }

  private onProgress(call: Pending, message: Extract<WorkerMessage, { type: "progress" }>): void {
    if (!call.onProgress) {
      this.refuse(message);
      return;
    }
    const ack = (error?: string) =>
      this.post({
        type: "progress_ack",
        id: message.id,
        seq: message.seq,
        ...(error !== undefined ? { error } : {}),
      });
    call.onProgress(message.metadata).then(
      () => ack(),
      (error: unknown) => ack((error as Error)?.message ?? String(error)),
    );
  }

  private refuse(message: WorkerMessage & { id: number }): void {
    this.start.onRefused?.(`${message.type} for call ${message.id}`);
  }

  /**
   * An idle worker does not keep the control plane's process alive (as an idle in-process agent
   * would not); a call in flight does, as the agent's own pending work would.
   */
  private holdOpen(busy: boolean): void {
    const channel = this.child.channel as { ref?(): void; unref?(): void } | null | undefined;
    if (busy) {
      this.child.ref();
      channel?.ref?.();
    } else {
      this.child.unref();
      channel?.unref?.();
    }
  }

  private startWatchdog(): void {
    const { heartbeatTimeoutMs, idleMs } = this.start.timings;
    this.watchdog = setInterval(
      () => {
        const now = Date.now();
        if (now - this.lastBeat > heartbeatTimeoutMs) {
          this.kill(`was stopped: no heartbeat for ${heartbeatTimeoutMs} ms`);
        } else if (this.pending.size === 0 && now - this.lastCall > idleMs) {
          this.kill(IDLE_REASON);
        }
      },
      Math.max(10, Math.floor(Math.min(heartbeatTimeoutMs, idleMs) / 4)),
    );
    this.watchdog.unref();
  }

  /** The render the worker sends after call `id`; undefined if it does not come in time. */
  private awaitNextRender(id: number, key: string): Promise<NextRender | undefined> {
    return new Promise((resolve) => {
      // Unref'd: a turn that ends without another step never asks for it.
      const timer = setTimeout(
        () => this.settleNextRender(id, undefined),
        this.start.timings.renderDeadlineMs,
      );
      timer.unref();
      this.nextRenders.set(id, { key, resolve, timer });
    });
  }

  private settleNextRender(id: number, outcome: NextRender | undefined): void {
    const next = this.nextRenders.get(id);
    if (!next) return;
    this.nextRenders.delete(id);
    clearTimeout(next.timer);
    next.resolve(outcome);
  }

  private onExit(reason: string): void {
    if (this.lost) return;
    this.lost = reason;
    clearInterval(this.watchdog);
    for (const id of [...this.nextRenders.keys()]) this.settleNextRender(id, undefined);
    const error = new WorkerLostError(`The agent's worker ${reason}`);
    const blamed = memoryCulprit(reason, [...this.pending.values()]);
    for (const call of this.pending.values()) {
      clearTimeout(call.timer);
      if (call === blamed) {
        call.resolve({ ok: false, message: `${call.tool} failed: its worker ${reason}` });
      } else call.reject(error);
    }
    this.pending.clear();
    this.start.onLost?.(reason);
  }

  /** Once the worker is gone: whatever it left in its group is killed, then the group removed. */
  private releaseGroup(): void {
    const group = this.group;
    if (!group) return;
    killGroup(group);
    void group.remove();
  }

  private post(message: ParentMessage): void {
    if (this.lost || !this.child.connected) return;
    try {
      this.child.send(message);
    } catch {
      // The channel closed under us; the exit handler fails the calls.
    }
  }
}

/**
 * The call a memory-limit stop is pinned on: only when it was the one call open, and a run or a
 * preview. Running it again would only stop the worker again, so it fails (the model sees why)
 * instead of being resumed. With several calls open nobody knows which one took the memory, so
 * each is lost and resumed; an apply is never failed this way, since it may already have done
 * its work (it becomes unconfirmed, as after any loss).
 */
function memoryCulprit(reason: string, calls: Pending[]): Pending | undefined {
  if (!isMemoryReason(reason) || calls.length !== 1) return undefined;
  const [only] = calls;
  return only && (only.kind === "run" || only.kind === "preview") ? only : undefined;
}

/** Which reply answers which request. */
function fits(kind: CallKind, reply: WorkerMessage["type"]): boolean {
  if (kind === "render") return reply === "rendered" || reply === "render_failed";
  return reply === "outcome" || (reply === "progress" && kind === "run");
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

export function wireRequest(request: RenderedAgent["request"]) {
  return {
    input: request.input,
    builtInToolIds: [...request.builtInToolIds],
    ...(request.memory ? { memory: request.memory } : {}),
    ...(request.sessionData ? { sessionData: request.sessionData } : {}),
  };
}

/** A render error as the engine knows it: RenderErrors keep their code, others their stack. */
function renderFailure(error: WireError): Error {
  if (error.renderCode) return new RenderError(error.renderCode, error.message);
  const e = new Error(error.message);
  e.name = error.name;
  if (error.stack) e.stack = error.stack;
  return e;
}
