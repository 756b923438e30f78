// One worker process, seen from the control plane: started with an explicit minimal
// environment, a handshake that gives it a random token, and then calls matched to their
// outcomes by id. A worker that exits, misses heartbeats, or keeps a call past its deadline is
// killed and every call still open on it fails with WorkerLostError.

import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createRequire } from "node:module";
import { fileURLToPath, pathToFileURL } from "node:url";
import { type JsonValue, OpenComputerError, RenderError } from "@opencomputer/agent";
import { type CodeOutcome, type RenderedAgent, WorkerLostError } from "../agents/execution.ts";
import type { AgentLocation } from "../agents/resolver.ts";
import type { GatewayBridge } from "./gateway-bridge.ts";
import {
  type ParentMessage,
  PROTOCOL_VERSION,
  type WireError,
  type WorkerMessage,
} from "./protocol.ts";

export const CHILD_SCRIPT = fileURLToPath(new URL("./child.ts", import.meta.url));
export const TSX_LOADER = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;

export interface WorkerTimings {
  /** How often the worker reports it is alive (default 500 ms). */
  heartbeatMs: number;
  /** Silence after which the worker counts as hung and is killed (default 10 s). */
  heartbeatTimeoutMs: number;
  /** Longest a render may take (default 10 s); renders are synchronous, so this is generous. */
  renderDeadlineMs: number;
  /** Longest a run / preview / apply may take before the worker is replaced (default 15 min). */
  callDeadlineMs: number;
  /** Longest starting Node and loading the deployment may take (default 30 s). */
  startTimeoutMs: number;
  /** A worker with no call for this long is stopped; the next call starts another (10 min). */
  idleMs: number;
}

export const DEFAULT_TIMINGS: WorkerTimings = {
  heartbeatMs: 500,
  heartbeatTimeoutMs: 10_000,
  renderDeadlineMs: 10_000,
  callDeadlineMs: 15 * 60_000,
  startTimeoutMs: 30_000,
  idleMs: 10 * 60_000,
};

/** The reason a worker stopped for being idle: not a loss worth a warning. */
export const IDLE_REASON = "was stopped: idle";

export interface WorkerCommand {
  command: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  /** Host uid/gid to start the command as (a root runtime drops privileges for its sandboxes). */
  uid?: number;
  gid?: number;
}

/**
 * Turns the plain command into the one that runs, e.g. inside bubblewrap. `network: false`
 * (microvm sessions) asks for no network at all.
 */
export type WorkerLauncher = (
  command: WorkerCommand,
  context: {
    location: AgentLocation;
    network: boolean;
    /** Without network: the directory of the gateway bridge's sockets, to bind read-only. */
    bridgeDir?: string;
  },
) => WorkerCommand;

export interface WorkerStart {
  location: AgentLocation;
  timings: WorkerTimings;
  env: Record<string, string>;
  launcher?: WorkerLauncher;
  /** Whether a sandboxed worker keeps the host's network (false for microvm sessions). */
  network?: boolean;
  /** Carries egress to a loopback gateway into a worker without network. */
  bridge?: GatewayBridge;
  /** Told once when the worker is gone, with why. */
  onLost?: (reason: string) => void;
}

interface Pending {
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
  resolve(next: NextRender | undefined): void;
  timer: NodeJS.Timeout;
}

export class WorkerProcess {
  /** The worker's pid once it is initialized, as the worker sees it (inside a sandbox too). */
  pid = 0;
  lost: string | null = null;
  private readonly child: ChildProcess;
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
    let command: WorkerCommand = {
      command: process.execPath,
      args: ["--import", TSX_LOADER, CHILD_SCRIPT],
      cwd: location.cwd,
      env: start.env,
    };
    if (start.bridge) {
      command.env = { ...command.env, OC_GATEWAY_BRIDGE: start.bridge.dir };
    }
    if (start.launcher) {
      command = start.launcher(command, {
        location,
        network: start.network ?? true,
        ...(start.bridge ? { bridgeDir: start.bridge.dir } : {}),
      });
    }
    this.child = spawn(command.command, command.args, {
      cwd: command.cwd,
      ...(command.uid !== undefined ? { uid: command.uid } : {}),
      ...(command.gid !== undefined ? { gid: command.gid } : {}),
      // Never process.env: the worker gets exactly the variables given, no secret among them.
      env: command.env,
      stdio: ["ignore", "inherit", "inherit", "ipc"],
      serialization: "json",
    });
    this.ready = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(this.loadError(`did not start within ${timings.startTimeoutMs} ms`));
        this.kill("start timeout");
      }, timings.startTimeoutMs);
      const onMessage = (message: WorkerMessage) => {
        if (message.type === "ready") {
          if (message.version !== PROTOCOL_VERSION) {
            clearTimeout(timer);
            reject(this.loadError(`speaks protocol ${message.version}, not ${PROTOCOL_VERSION}`));
            this.kill("protocol mismatch");
            return;
          }
          this.post({
            type: "init",
            version: PROTOCOL_VERSION,
            token: this.token,
            loader: location.loader,
            args: location.args,
            heartbeatMs: timings.heartbeatMs,
          });
          return;
        }
        if (!("token" in message) || message.token !== this.token) return;
        clearTimeout(timer);
        this.child.off("message", onMessage);
        if (message.type === "initialized") {
          this.pid = message.pid;
          this.child.on("message", (m: WorkerMessage) => this.onMessage(m));
          this.startWatchdog();
          this.holdOpen(false);
          resolve();
        } else if (message.type === "init_failed") {
          reject(this.loadError(`failed to load: ${message.error.message}`));
        }
      };
      this.child.on("message", onMessage);
      this.child.once("exit", (code, signal) => {
        clearTimeout(timer);
        reject(this.loadError(`exited while loading (${signal ?? `code ${code}`})`));
      });
      this.child.once("error", (error) => {
        clearTimeout(timer);
        reject(this.loadError(`could not start: ${error.message}`));
      });
    });
    this.ready.catch(() => {});
    this.child.once("exit", (code, signal) => this.onExit(`exited (${signal ?? `code ${code}`})`));
    this.child.on("error", () => this.onExit("could not be started"));
  }

  render(request: RenderedAgent["request"]): Promise<RenderedAgent> {
    return this.call<RenderedAgent>(
      (id) => ({ type: "render", id, request: wireRequest(request) }),
      this.start.timings.renderDeadlineMs,
    );
  }

  /**
   * run / preview / apply: the message without its id, the progress sink, the abort signal.
   * With `onNextRender` (a run only), the worker renders the call's render request again right
   * after the outcome, and `onNextRender` gets that render's promise before the outcome resolves.
   */
  async invoke(
    message: DistributiveOmit<Extract<ParentMessage, { type: "run" | "preview" | "apply" }>, "id">,
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
      (n) => {
        id = n;
        return (
          onNextRender && message.type === "run"
            ? { ...message, id: n, renderAfter: true }
            : { ...message, id: n }
        ) as ParentMessage;
      },
      this.start.timings.callDeadlineMs,
      onProgress,
      onNextRender,
    );
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });
    return result.finally(() => signal.removeEventListener("abort", onAbort));
  }

  /** The pid of the process started (bwrap, when sandboxed), as the host sees it. */
  get hostPid(): number | undefined {
    return this.child.pid;
  }

  kill(reason: string): void {
    if (!this.lost) this.onExit(reason);
    this.child.kill("SIGKILL");
  }

  private call<T>(
    build: (id: number) => ParentMessage,
    deadlineMs: number,
    onProgress?: (metadata: JsonValue) => Promise<void>,
    onNextRender?: Pending["onNextRender"],
  ): Promise<T> {
    if (this.lost) return Promise.reject(new WorkerLostError(`The agent's worker ${this.lost}`));
    const id = this.nextId++;
    this.lastCall = Date.now();
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(
        () => this.kill(`was stopped: a call took longer than its deadline of ${deadlineMs} ms`),
        deadlineMs,
      );
      this.holdOpen(true);
      this.pending.set(id, {
        resolve: resolve as (value: unknown) => void,
        reject,
        timer,
        ...(onProgress ? { onProgress } : {}),
        ...(onNextRender ? { onNextRender } : {}),
      });
      this.post(build(id));
    });
  }

  private onMessage(message: WorkerMessage): void {
    // Only the process we started, speaking with the token we gave it, is heard.
    if (!("token" in message) || message.token !== this.token) return;
    this.lastBeat = Date.now();
    if (message.type === "heartbeat") return;
    if (message.type === "progress") {
      const call = this.pending.get(message.id);
      if (!call?.onProgress) return;
      call.onProgress(message.metadata).then(
        () => this.post({ type: "progress_ack", id: message.id, seq: message.seq }),
        (error: unknown) =>
          this.post({
            type: "progress_ack",
            id: message.id,
            seq: message.seq,
            error: (error as Error)?.message ?? String(error),
          }),
      );
      return;
    }
    if (message.type === "next_render") {
      this.settleNextRender(
        message.id,
        message.render
          ? { render: message.render }
          : { error: renderFailure(message.error ?? { name: "Error", message: "no render" }) },
      );
      return;
    }
    if (!("id" in message)) return;
    const call = this.pending.get(message.id);
    if (!call) return;
    this.pending.delete(message.id);
    if (this.pending.size === 0) this.holdOpen(false);
    clearTimeout(call.timer);
    if (message.type === "rendered") call.resolve(message.render);
    else if (message.type === "outcome") {
      if (call.onNextRender) call.onNextRender(this.awaitNextRender(message.id));
      call.resolve(message.outcome);
    } else if (message.type === "render_failed") call.reject(renderFailure(message.error));
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
  private awaitNextRender(id: number): Promise<NextRender | undefined> {
    return new Promise((resolve) => {
      // Unref'd: a turn that ends without another step never asks for it.
      const timer = setTimeout(
        () => this.settleNextRender(id, undefined),
        this.start.timings.renderDeadlineMs,
      );
      timer.unref();
      this.nextRenders.set(id, { resolve, timer });
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
    for (const call of this.pending.values()) {
      clearTimeout(call.timer);
      call.reject(error);
    }
    this.pending.clear();
    this.start.onLost?.(reason);
  }

  private post(message: ParentMessage): void {
    if (this.lost || !this.child.connected) return;
    try {
      this.child.send(message);
    } catch {
      // The channel closed under us; the exit handler fails the calls.
    }
  }

  private loadError(message: string): OpenComputerError {
    const { deploymentId } = this.start.location;
    return new OpenComputerError(
      "deployment_invalid",
      `Deployment ${deploymentId}: its worker ${message}`,
      {
        path: "deploymentId",
      },
    );
  }
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

function wireRequest(request: RenderedAgent["request"]) {
  return { input: request.input, builtInToolIds: [...request.builtInToolIds] };
}

/** A render error as the engine knows it: RenderErrors keep their code, others their stack. */
function renderFailure(error: WireError): Error {
  if (error.renderCode) return new RenderError(error.renderCode, error.message);
  const e = new Error(error.message);
  e.name = error.name;
  if (error.stack) e.stack = error.stack;
  return e;
}
