import { chown, mkdir, rm } from "node:fs/promises";
import { join } from "node:path";
import type { Cgroups, ComputerGroup, SandboxHost } from "@opencomputer/sandbox";
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
import { readBounded, removeQuietly } from "./read-output.ts";
import { ResidentSandbox } from "./resident-sandbox.ts";

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
    // A computer that dies on its own (crash, OOM, a command killing the loop) is released.
    void sandbox.whenExited().then(() => {
      if (!this.running) void this.release("unknown");
    });
  }

  static async start(
    sessionId: string,
    generation: number,
    lifetimeSeconds: number,
    settings: GenerationSettings,
    hooks: GenerationHooks,
  ): Promise<BwrapComputer> {
    const tmpDir = join(settings.scratchDir, "tmp");
    const controlDir = join(settings.scratchDir, "control");
    for (const dir of [settings.scratchDir, tmpDir, controlDir]) {
      await mkdir(dir, { recursive: true, mode: 0o700 });
      if (settings.host.runningAsRoot) await chown(dir, SANDBOX_UID, SANDBOX_GID);
    }
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
          tmpDir,
          controlDir,
          allowNetwork: settings.allowNetwork,
          limits: settings.limits,
        },
        group,
      );
    } catch (error) {
      await group?.remove();
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
    const pending = this.execute(command, options, controller.signal);
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
    if (this.running) {
      // Session end or an explicit release stops the command the same way an interrupt does.
      this.running.abort();
      await this.runningDone;
    }
    const gone = await this.sandbox.terminate(this.settings.confirmStopMs);
    this.hooks.released(this, reason);
    await rm(this.settings.scratchDir, { recursive: true, force: true });
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

  private async execute(
    command: string,
    options: RunOptions,
    released: AbortSignal,
  ): Promise<{ outcome: RunOutcome; releaseReason?: ReleaseReason }> {
    const started = performance.now();
    let timer: NodeJS.Timeout | undefined;
    let stopCode: "timeout" | "aborted" = "timeout";
    const stop = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, options.timeoutSeconds * 1000);
      const onAbort = () => {
        stopCode = "aborted";
        resolve();
      };
      for (const signal of [options.signal, released]) {
        if (signal?.aborted) onAbort();
        else signal?.addEventListener("abort", onAbort, { once: true });
      }
    });
    const oomBefore = this.group?.oomKills();
    const end = await this.sandbox.exec(command, stop, this.settings.confirmStopMs);
    clearTimeout(timer);
    const oomNote = this.oomNote(oomBefore);
    const paths = this.sandbox.outputPaths();
    const limit = this.settings.outputLimitBytes;
    const [stdout, stderr] = await Promise.all([
      readBounded(paths.stdout, limit),
      readBounded(paths.stderr, limit),
    ]);
    await removeQuietly(paths.stdout, paths.stderr);
    const output = {
      stdout: stdout.text,
      stderr: stderr.text,
      durationMs: Math.round(performance.now() - started),
      truncated: stdout.truncated || stderr.truncated,
    };
    const what = describeCommand(command);
    if (end.kind === "exited") {
      const result = { exitCode: end.exitCode, ...output, ...(oomNote ? { note: oomNote } : {}) };
      return { outcome: { ok: true, result } };
    }
    if (end.kind === "lost") {
      const diagnostics = this.sandbox.lastDiagnostics();
      const message =
        `The computer terminated while \`${what}\` ran; every process in it is gone and files ` +
        "written to /workspace remain. The next command gets a fresh computer." +
        (oomNote ? `\n${oomNote}` : "") +
        (diagnostics ? `\nComputer log: ${diagnostics.slice(-500)}` : "");
      return {
        outcome: { ok: false, failure: { code: "computer_lost", message, ...output } },
        releaseReason: "unknown",
      };
    }
    if (!end.confirmed) {
      const message =
        `Outcome unknown: \`${what}\` (timeout ${options.timeoutSeconds}s) could not be confirmed ` +
        "stopped because the computer stopped answering. That computer runs nothing more; the " +
        "next command gets a fresh one with the same /workspace. The command was not re-run.";
      return {
        outcome: { ok: false, failure: { code: "outcome_unknown", message, ...output } },
        releaseReason: "unresponsive",
      };
    }
    let message =
      stopCode === "timeout"
        ? `Command \`${what}\` timed out after ${options.timeoutSeconds}s; it and every process ` +
          "it started were stopped (the computer was terminated; files in /workspace remain). " +
          "Output so far is attached."
        : `Command \`${what}\` was interrupted; it and every process it started were stopped ` +
          "(the computer was terminated; files in /workspace remain).";
    if (oomNote) message += `\n${oomNote}`;
    return {
      outcome: { ok: false, failure: { code: stopCode, message, ...output } },
      releaseReason: "operation_unsettled",
    };
  }
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
