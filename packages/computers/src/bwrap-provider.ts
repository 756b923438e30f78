import { createHash } from "node:crypto";
import { chmod, mkdir, stat } from "node:fs/promises";
import { join } from "node:path";
import {
  type CgroupStatus,
  type Cgroups,
  DEFAULT_CGROUP_ROOT,
  detectCgroups,
  discoverSandboxHost,
  ensureOwnedDir,
  type SandboxHost,
} from "@opencomputer/sandbox";
import { SANDBOX_GID, SANDBOX_UID, type SandboxLimits } from "./bwrap-args.ts";
import { BwrapComputer, type GenerationHooks } from "./bwrap-computer.ts";
import { type Clock, systemClock } from "./clock.ts";
import type {
  AcquireOptions,
  Computer,
  ComputerProvider,
  LifecycleEvent,
  ReleaseReason,
} from "./computer-provider.ts";
import { type ComputersDirError, computersBase } from "./computers-dir.ts";

export interface BubblewrapProviderOptions {
  /**
   * Workspaces live at `<rootDir>/workspaces/<sessionId>`, each generation's control files
   * under `scratch/` — unless the sandbox user cannot reach rootDir (see `fallbackDir`).
   */
  rootDir: string;
  /**
   * Used when running as root and rootDir lies below a directory uid 65534 cannot traverse
   * (e.g. a 0700 one): the computers' directories then live in `<fallbackDir>/<hash of
   * rootDir>` (default /var/lib/opencomputer/computers). `provider.baseDir` says which.
   */
  fallbackDir?: string;
  lifetimeSeconds?: number;
  idleReleaseSeconds?: number;
  /** The tail of the lifetime no command may reach into (default 120). */
  reservedSeconds?: number;
  /** Off by default: the sandbox gets its own empty network namespace. */
  allowNetwork?: boolean;
  limits?: Partial<SandboxLimits>;
  /** Bound on each of stdout and stderr (default 64 KiB). */
  outputLimitBytes?: number;
  /** How long a kill may take to be confirmed before the outcome is unknown (default 3000). */
  confirmStopMs?: number;
  clock?: Clock;
  onLifecycle?: (event: LifecycleEvent) => void;
  /**
   * The operator's package image for every computer (a root directory with usr/, bin/, etc/,
   * e.g. made with debootstrap); the host's system directories when absent. Set for the whole
   * server: agent code cannot choose or override it.
   */
  imageDir?: string;
  /** Normally discovered; injectable so a test can point at a different bwrap. */
  host?: SandboxHost;
  /**
   * Where the cgroup filesystem is mounted (default /sys/fs/cgroup; v2 unified or v1
   * hierarchies are detected there). `false` turns control groups off. When they cannot be
   * used, computers run without them and `provider.cgroups` says why.
   */
  cgroupRoot?: string | false;
}

export const MAX_COMMAND_SECONDS = 1800;

export const DEFAULT_LIMITS: SandboxLimits = {
  maxProcesses: 256,
  maxMemoryBytes: 4 * 1024 ** 3,
  maxFileBytes: 1024 ** 3,
  workspaceBytes: 4 * 1024 ** 3,
  workspaceEntries: 200_000,
  tmpBytes: 512 * 1024 ** 2,
  totalMemoryBytes: 2 * 1024 ** 3,
  maxTasks: 512,
  cpus: 1,
};

interface SessionState {
  generation: number;
  current: BwrapComputer | undefined;
  lastReleaseReason: ReleaseReason | undefined;
  cancelIdle?: () => void;
  cancelLifetime?: () => void;
}

/** Session ids become directory names: anything unusual is hashed rather than trusted. */
export function sessionDirName(sessionId: string): string {
  if (/^[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$/.test(sessionId)) return sessionId;
  return `h-${createHash("sha256").update(sessionId).digest("hex").slice(0, 40)}`;
}

export class BubblewrapComputerProvider implements ComputerProvider {
  readonly host: SandboxHost;
  readonly limits: SandboxLimits;
  /** Whether computers get a control group (memory, pids and CPU limits), and if not, why. */
  readonly cgroups: CgroupStatus;
  private readonly cgroupTree: Cgroups | undefined;
  /** Where workspaces/ and scratch/ are: rootDir, or the fallback (see fallbackDir). */
  readonly baseDir: string;
  private readonly baseError: ComputersDirError | undefined;
  /** The provider's own directories down to baseDir; it makes them traversable. */
  private readonly ownedDirs: string[];
  private groupSequence = 0;
  private readonly clock: Clock;
  private readonly sessions = new Map<string, SessionState>();
  private readonly lifetimeSeconds: number;
  private readonly idleReleaseSeconds: number;
  private readonly reservedSeconds: number;
  private rootReady: Promise<void> | undefined;

  constructor(private readonly options: BubblewrapProviderOptions) {
    this.host = options.host ?? discoverSandboxHost(options.imageDir);
    this.clock = options.clock ?? systemClock;
    this.limits = { ...DEFAULT_LIMITS, ...options.limits };
    this.lifetimeSeconds = options.lifetimeSeconds ?? 3600;
    this.idleReleaseSeconds = options.idleReleaseSeconds ?? 180;
    this.reservedSeconds = options.reservedSeconds ?? 120;
    const root = options.cgroupRoot ?? DEFAULT_CGROUP_ROOT;
    const detected =
      root === false
        ? { cgroups: undefined, status: { enabled: false as const, reason: "turned off" } }
        : detectCgroups(root);
    this.cgroupTree = detected.cgroups;
    const sandboxUser = this.host.runningAsRoot
      ? { uid: SANDBOX_UID, gid: SANDBOX_GID }
      : undefined;
    const base = computersBase(options.rootDir, sandboxUser, options.fallbackDir);
    this.baseDir = "base" in base ? base.base : options.rootDir;
    this.baseError = "error" in base ? base.error : undefined;
    this.ownedDirs = "owned" in base ? base.owned : [];
    this.cgroups = detected.status;
  }

  maxCommandSeconds(): number {
    return Math.min(MAX_COMMAND_SECONDS, this.lifetimeSeconds - this.reservedSeconds);
  }

  /** The session's workspace directory on the host (it may not exist yet). */
  workspaceDir(sessionId: string): string {
    return join(this.baseDir, "workspaces", sessionDirName(sessionId));
  }

  /** Current generation of a session, 0 before its first computer. */
  generation(sessionId: string): number {
    return this.sessions.get(sessionId)?.generation ?? 0;
  }

  async acquire(sessionId: string, options: AcquireOptions): Promise<Computer> {
    if (options.minRemainingSeconds > this.maxCommandSeconds()) {
      throw new RangeError(
        `No computer can host ${options.minRemainingSeconds}s; at most ${this.maxCommandSeconds()}s.`,
      );
    }
    let state = this.sessions.get(sessionId);
    if (!state) {
      state = { generation: 0, current: undefined, lastReleaseReason: undefined };
      this.sessions.set(sessionId, state);
    }
    const current = state.current;
    if (current?.usable() && current.remainingSeconds() >= options.minRemainingSeconds) {
      state.cancelIdle?.();
      return current;
    }
    // It cannot host the command for its full timeout: replace it rather than split the command.
    if (current?.usable()) await current.release("lifetime");
    return this.startGeneration(sessionId, state);
  }

  async release(sessionId: string, reason: ReleaseReason): Promise<void> {
    await this.sessions.get(sessionId)?.current?.release(reason);
    if (reason === "session_ended") this.sessions.delete(sessionId);
  }

  async close(): Promise<void> {
    await Promise.all([...this.sessions.keys()].map((id) => this.release(id, "requested")));
    await this.cgroupTree?.close();
  }

  private async startGeneration(sessionId: string, state: SessionState): Promise<BwrapComputer> {
    await this.ensureRoot();
    const generation = state.generation + 1;
    const dirName = sessionDirName(sessionId);
    const workspaceDir = this.workspaceDir(sessionId);
    const scratchDir = join(this.baseDir, "scratch", `${dirName}-${generation}`);
    await this.ownedDir(workspaceDir);
    const computer = await BwrapComputer.start(
      sessionId,
      generation,
      this.lifetimeSeconds,
      {
        host: this.host,
        clock: this.clock,
        workspaceDir,
        scratchDir,
        allowNetwork: this.options.allowNetwork ?? false,
        limits: this.limits,
        outputLimitBytes: this.options.outputLimitBytes ?? 64 * 1024,
        confirmStopMs: this.options.confirmStopMs ?? 3000,
        reservedSeconds: this.reservedSeconds,
        cgroups: this.cgroupTree,
        groupName: `${++this.groupSequence}-${dirName}-${generation}`,
      },
      this.hooksFor(state),
    );
    const replacedBecause = state.lastReleaseReason;
    state.generation = generation;
    state.current = computer;
    state.cancelLifetime = this.clock.setTimer(
      () => void computer.release("lifetime"),
      this.lifetimeSeconds * 1000,
    );
    this.emit(computer, "running", replacedBecause);
    return computer;
  }

  private hooksFor(state: SessionState): GenerationHooks {
    return {
      busy: () => {
        state.cancelIdle?.();
        state.cancelIdle = undefined;
      },
      idle: (computer) => {
        state.cancelIdle?.();
        state.cancelIdle = this.clock.setTimer(
          () => void computer.release("idle"),
          this.idleReleaseSeconds * 1000,
        );
      },
      released: (computer, reason) => {
        if (state.current === computer) {
          state.cancelIdle?.();
          state.cancelLifetime?.();
          state.cancelIdle = undefined;
          state.cancelLifetime = undefined;
          state.current = undefined;
          state.lastReleaseReason = reason;
        }
        this.emit(computer, "released", reason);
      },
    };
  }

  private emit(computer: Computer, state: LifecycleEvent["state"], reason?: ReleaseReason): void {
    const listener = this.options.onLifecycle;
    if (!listener) return;
    // A throwing listener must not leave a computer half-started or half-released.
    try {
      listener({
        sessionId: computer.sessionId,
        generation: computer.generation,
        state,
        ...(reason ? { reason } : {}),
        startedAt: computer.startedAt,
        expiresAt: computer.expiresAt,
      });
    } catch {
      // Reported nowhere on purpose: lifecycle events are advisory to the runtime.
    }
  }

  private ensureRoot(): Promise<void> {
    this.rootReady ??= (async () => {
      if (this.baseError) throw this.baseError;
      const root = this.baseDir;
      await mkdir(join(root, "workspaces"), { recursive: true });
      await mkdir(join(root, "scratch"), { recursive: true });
      if (this.host.runningAsRoot) {
        // bwrap runs as the sandbox uid, which must be able to reach the bind sources; the
        // execute bit lets it pass through without listing other sessions' directories.
        for (const dir of [...this.ownedDirs, join(root, "workspaces"), join(root, "scratch")]) {
          const mode = (await stat(dir)).mode & 0o7777;
          await chmod(dir, mode | 0o111);
        }
      }
    })();
    return this.rootReady;
  }

  /** The workspace: handed to the sandbox user without following a link (ensureOwnedDir). */
  private async ownedDir(dir: string): Promise<void> {
    const owner = this.host.runningAsRoot ? { uid: SANDBOX_UID, gid: SANDBOX_GID } : {};
    await ensureOwnedDir(dir, { mode: 0o700, ...owner });
  }
}
