import { rm } from "node:fs/promises";
import { join } from "node:path";
import {
  type Cgroups,
  type ComputerGroup,
  ensureOwnedDir,
  type SandboxHost,
} from "@opencomputer/sandbox";
import { SANDBOX_GID, SANDBOX_UID, type SandboxLimits } from "./bwrap-args.ts";
import type { Clock } from "./clock.ts";
import type {
  Computer,
  ReleaseReason,
  RunFailure,
  RunFailureCode,
  RunOptions,
  RunOutcome,
} from "./computer-provider.ts";
import { type DiskUsage, DiskWatch, describeUsage } from "./disk-quota.ts";
import { readBounded, removeQuietly } from "./read-output.ts";
import { ResidentSandbox } from "./resident-sandbox.ts";
import { type EndFacts, type Settled, settle } from "./run-outcome.ts";

export interface GenerationSettings {
  host: SandboxHost;
  clock: Clock;
  workspaceDir: string;
  /** This generation's /tmp and control files; deleted on release, so /tmp does not survive. */
  scratchDir: string;
  allowNetwork: boolean;
  limits: SandboxLimits;
  outputLimitBytes: number;
  confirmStopMs: number;
  /** Seconds at the end of the lifetime no command may reach into. */
  reservedSeconds: number;
  /** The provider's control groups, when the host allows them; the computer gets a child. */
  cgroups: Cgroups | undefined;
  /** Name of this generation's child group (unique within the provider). */
  groupName: string;
}

export interface GenerationHooks {
  busy(computer: BwrapComputer): void;
  idle(computer: BwrapComputer): void;
  released(computer: BwrapComputer, reason: ReleaseReason): void;
}

/** Shortened command for messages: the model needs to recognise it, not reread 64 KiB. */
export function describeCommand(command: string): string {
  const oneLine = command.replace(/\s+/g, " ").trim();
  return oneLine.length > 200 ? `${oneLine.slice(0, 200)}…` : oneLine;
}

/**
 * One computer generation: a long-lived bubblewrap sandbox (see ResidentSandbox) with the
 * session's /workspace, its own /tmp, and a lifetime. Stopping a command means terminating
 * this computer, so after a timeout or interrupt the next command starts a fresh generation.
 */
export class BwrapComputer implements Computer {
  private state: "ready" | "released" = "ready";
  private running: AbortController | undefined;
  private runningDone: Promise<unknown> | undefined;
  /** Set while a command runs: stops it because the disk quota was passed. */
  private quotaStop: ((usage: DiskUsage) => void) | undefined;
  private readonly watch: DiskWatch;

  private constructor(
    readonly sessionId: string,
    readonly generation: number,
    readonly startedAt: number,
    readonly expiresAt: number,
    private readonly settings: GenerationSettings,
    private readonly hooks: GenerationHooks,
    private readonly sandbox: ResidentSandbox,
    private readonly group: ComputerGroup | undefined,
  ) {
    // A computer that dies on its own (crash, OOM, killed from outside) is released.
    void sandbox.whenExited().then(() => {
      if (!this.running) void this.release("unknown");
    });
    const { workspaceBytes, workspaceEntries } = settings.limits;
    this.watch = new DiskWatch(
      [settings.workspaceDir, controlDirOf(settings)],
      { bytes: workspaceBytes, entries: workspaceEntries },
      (usage) => {
        if (this.quotaStop) this.quotaStop(usage);
        // Between commands: a background process kept writing. Nothing to report it to.
        else void this.release("disk_quota");
      },
    );
  }

  static async start(
    sessionId: string,
    generation: number,
    lifetimeSeconds: number,
    settings: GenerationSettings,
    hooks: GenerationHooks,
  ): Promise<BwrapComputer> {
    const controlDir = controlDirOf(settings);
    const owner = settings.host.runningAsRoot ? { uid: SANDBOX_UID, gid: SANDBOX_GID } : {};
    // The scratch directory stays the runtime's (the sandbox never sees it, only the control
    // directory inside it), so nothing the sandbox does can swap the control directory.
    await ensureOwnedDir(settings.scratchDir, { mode: 0o711 });
    await ensureOwnedDir(controlDir, { mode: 0o700, ...owner });
    const { totalMemoryBytes, maxTasks, cpus } = settings.limits;
    const group = settings.cgroups?.create(settings.groupName, {
      totalMemoryBytes,
      maxTasks,
      cpus,
    });
    let sandbox: ResidentSandbox;
    try {
      sandbox = await ResidentSandbox.start(
        settings.host,
        {
          workspaceDir: settings.workspaceDir,
          controlDir,
          allowNetwork: settings.allowNetwork,
          limits: settings.limits,
        },
        group,
      );
    } catch (error) {
      // Every way out of a failed start removes what it made: the scratch directory and the
      // control group (ResidentSandbox.start only returns once its processes are gone).
      await rm(settings.scratchDir, { recursive: true, force: true }).catch(() => undefined);
      if (group && !(await group.remove())) {
        console.warn(
          `computers: control group ${group.paths.join(", ")} left after a failed start`,
        );
      }
      throw error;
    }
    const now = settings.clock.now();
    return new BwrapComputer(
      sessionId,
      generation,
      now,
      now + lifetimeSeconds * 1000,
      settings,
      hooks,
      sandbox,
      group,
    );
  }

  remainingSeconds(): number {
    const usableUntil = this.expiresAt - this.settings.reservedSeconds * 1000;
    return Math.max(0, Math.floor((usableUntil - this.settings.clock.now()) / 1000));
  }

  usable(): boolean {
    return this.state === "ready" && this.sandbox.alive();
  }

  async run(command: string, options: RunOptions): Promise<RunOutcome> {
    if (!this.usable() || this.running) {
      return failed("computer_unavailable", "This computer was released or is busy.");
    }
    if (options.timeoutSeconds > this.remainingSeconds()) {
      // Never split a command across computers: the caller must acquire one that fits.
      return failed(
        "computer_unavailable",
        `A ${options.timeoutSeconds}s command does not fit the ${this.remainingSeconds()}s this computer has left.`,
      );
    }
    const controller = new AbortController();
    this.running = controller;
    this.hooks.busy(this);
    // Whatever goes wrong while running or reading results must still settle the call and
    // leave the computer releasable (a rejected run would wedge release, and its cgroup).
    const pending = this.execute(command, options, controller.signal).catch(
      (error): Settled => ({
        outcome: failed(
          "computer_lost",
          `The computer failed while running \`${describeCommand(command)}\` (${String(error)}); ` +
            "it was released and the next command gets a fresh one with the same /workspace.",
        ),
        releaseReason: "unknown",
      }),
    );
    this.runningDone = pending;
    const { outcome, releaseReason } = await pending;
    this.running = undefined;
    this.runningDone = undefined;
    if (releaseReason) await this.release(releaseReason);
    else if (this.state === "ready") this.hooks.idle(this);
    return outcome;
  }

  async release(reason: ReleaseReason): Promise<void> {
    if (this.state === "released") return;
    this.state = "released";
    this.watch.stop();
    if (this.running) {
      // Session end or an explicit release stops the command the same way an interrupt does.
      this.running.abort();
      await this.runningDone;
    }
    let gone = false;
    try {
      gone = await this.sandbox.terminate(this.settings.confirmStopMs);
      this.hooks.released(this, reason);
    } finally {
      await this.cleanUp(gone);
    }
  }

  /**
   * Removes the scratch directory and the control group, whatever failed before. The scratch
   * directory is only removed once the sandbox is confirmed gone: while a process of it runs it
   * could swap a directory for a link in the middle of the removal.
   */
  private async cleanUp(gone: boolean): Promise<void> {
    try {
      if (gone) await rm(this.settings.scratchDir, { recursive: true, force: true });
      else console.warn(`computers: ${this.settings.scratchDir} kept: its sandbox may still run`);
    } catch (error) {
      // Never a reason to keep the group (or to fail the release): the directory is only
      // disk, and the next generation uses a new one.
      console.warn(`computers: could not remove ${this.settings.scratchDir}: ${String(error)}`);
    } finally {
      if (this.group) {
        // bwrap itself is in the group too: wait (briefly) until it has been reaped.
        if (gone) await Promise.race([this.sandbox.whenExited(), delay(1000)]);
        if (!(await this.group.remove())) {
          // Processes remain (an unconfirmed stop); the provider retries when it is closed.
          console.warn(
            `computers: control group ${this.group.paths.join(", ")} still has processes; left in place`,
          );
        }
      }
    }
  }

  /**
   * Says so when the kernel's OOM killer acted in this computer's group since `before`: the
   * exit status alone (137, SIGKILL) does not tell a memory-limit kill from any other kill.
   */
  private oomNote(before: number | undefined): string | undefined {
    const after = this.group?.oomKills();
    if (before === undefined || after === undefined || after <= before) return undefined;
    const mib = Math.round(this.settings.limits.totalMemoryBytes / 1024 ** 2);
    const kills = after - before === 1 ? "a process" : `${after - before} processes`;
    return (
      `The computer reached its memory limit (${mib} MiB for all its processes together) ` +
      `while this command ran, and the kernel killed ${kills} in it (exit code 137 means SIGKILL).`
    );
  }

  /** Resolves when the command must be stopped: timeout, interrupt, release or disk quota. */
  private stopWhen(options: RunOptions, released: AbortSignal) {
    let timer: NodeJS.Timeout | undefined;
    const why: { code: EndFacts["stopCode"]; quota?: DiskUsage } = { code: "timeout" };
    const stop = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, options.timeoutSeconds * 1000);
      const onAbort = () => {
        why.code = "aborted";
        resolve();
      };
      for (const signal of [options.signal, released]) {
        if (signal?.aborted) onAbort();
        else signal?.addEventListener("abort", onAbort, { once: true });
      }
      this.quotaStop = (usage) => {
        why.code = "disk_quota";
        why.quota = usage;
        resolve();
      };
    });
    const done = () => {
      clearTimeout(timer);
      this.quotaStop = undefined;
    };
    return { stop, why, done };
  }

  private async execute(
    command: string,
    options: RunOptions,
    released: AbortSignal,
  ): Promise<Settled> {
    const started = performance.now();
    await this.watch.commandStarts();
    const { stop, why, done } = this.stopWhen(options, released);
    const oomBefore = this.group?.oomKills();
    const end = await this.sandbox.exec(command, stop, this.settings.confirmStopMs);
    done();
    this.watch.commandEnded();
    // Right after the command too: the last writes may have come after the last check.
    const usage =
      why.quota ?? (end.kind === "exited" ? await this.watch.checkAfterCommand() : undefined);
    const paths = this.sandbox.outputPaths();
    const limit = this.settings.outputLimitBytes;
    const owner = this.settings.host.runningAsRoot ? SANDBOX_UID : process.getuid?.();
    const [stdout, stderr] = await Promise.all([
      readBounded(paths.stdout, limit, owner),
      readBounded(paths.stderr, limit, owner),
    ]);
    await removeQuietly(paths.stdout, paths.stderr);
    const quota = {
      bytes: this.settings.limits.workspaceBytes,
      entries: this.settings.limits.workspaceEntries,
    };
    return settle({
      end,
      stopCode: why.code,
      what: describeCommand(command),
      timeoutSeconds: options.timeoutSeconds,
      output: {
        stdout: stdout.ok ? stdout.text : "",
        stderr: stderr.ok ? stderr.text : "",
        durationMs: Math.round(performance.now() - started),
        truncated: (stdout.ok && stdout.truncated) || (stderr.ok && stderr.truncated),
      },
      oomNote: this.oomNote(oomBefore),
      refused: !stdout.ok ? stdout.refused : !stderr.ok ? stderr.refused : undefined,
      quotaNote: usage?.over ? describeUsage(usage, quota) : undefined,
      diagnostics: this.sandbox.lastDiagnostics(),
    });
  }
}

function controlDirOf(settings: GenerationSettings): string {
  return join(settings.scratchDir, "control");
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

function failed(code: RunFailureCode, message: string): RunOutcome {
  const failure: RunFailure = {
    code,
    message,
    stdout: "",
    stderr: "",
    durationMs: 0,
    truncated: false,
  };
  return { ok: false, failure };
}
