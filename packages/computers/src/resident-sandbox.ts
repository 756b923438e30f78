import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import type { Readable, Writable } from "node:stream";
import { type ComputerGroup, type SandboxHost, seccompFilter } from "@opencomputer/sandbox";
import {
  buildBwrapArgs,
  SANDBOX_GID,
  SANDBOX_UID,
  type SandboxSpec,
  sandboxEnv,
} from "./bwrap-args.ts";
import { identify, type ProcessIdentity, waitForExit } from "./process-watch.ts";
import { commandFrame, STATUS_FD } from "./sandbox-loop.ts";

const INFO_FD = 3;
/** Only used with a control group: the sandbox waits here until it has been moved into it. */
const BLOCK_FD = 5;
/** bwrap reads the seccomp filter from here before it runs anything. */
const SECCOMP_FD = 6;
/** The same program for every computer: generated once. */
let filter: Buffer | undefined;

export type ExecEnd =
  | { kind: "exited"; exitCode: number }
  /** The sandbox died while the command ran (e.g. the command killed the loop). */
  | { kind: "lost" }
  | { kind: "stopped"; confirmed: boolean };

/**
 * One running bubblewrap sandbox: the body of a computer generation. It has its own PID
 * namespace, so terminating it is one SIGKILL to the namespace's init (the pid bwrap reports
 * on --info-fd): the kernel then kills everything inside, setsid'd and daemonized processes
 * included. Termination counts as done only once that init is seen to have exited.
 */
export class ResidentSandbox {
  private statusBuffer = "";
  private statusWaiter: ((line: string | undefined) => void) | undefined;
  private exited = false;
  private readonly exitedPromise: Promise<void>;
  private sequence = 0;

  private constructor(
    private readonly child: ChildProcess,
    private readonly init: ProcessIdentity,
    private readonly controlDir: string,
    private readonly diagnostics: { text: string },
  ) {
    this.exitedPromise = new Promise((resolve) => {
      child.once("exit", () => {
        this.exited = true;
        this.statusWaiter?.(undefined);
        resolve();
      });
    });
    const status = child.stdio[STATUS_FD] as Readable;
    status.on("data", (chunk: Buffer) => this.onStatus(chunk.toString("utf8")));
  }

  static async start(
    host: SandboxHost,
    spec: Omit<SandboxSpec, "infoFd" | "blockFd" | "seccompFd">,
    group?: ComputerGroup,
  ): Promise<ResidentSandbox> {
    const blockFd = group ? BLOCK_FD : undefined;
    const child = spawnBwrap(host, spec, blockFd);
    const diagnostics = { text: "" };
    const keep = (chunk: Buffer) => {
      // Only the loop's own errors (and bwrap's) land here; keep the tail for messages.
      diagnostics.text = (diagnostics.text + chunk.toString("utf8")).slice(-4000);
    };
    child.stdout?.on("data", keep);
    child.stderr?.on("data", keep);
    child.stdin?.on("error", () => undefined);
    let admitError: string | undefined;
    let reportedPid: number | undefined;
    const initPid = await new Promise<number | undefined>((resolve) => {
      // Both must arrive, in either order: the init's pid (to stop it) and the loop's hello.
      let info = "";
      let pid: number | undefined;
      let ready = false;
      const settle = () => {
        if (pid !== undefined && ready) resolve(pid);
      };
      (child.stdio[INFO_FD] as Readable).on("data", (chunk: Buffer) => {
        if (pid !== undefined) return;
        info += chunk.toString("utf8");
        const match = /"child-pid"\s*:\s*(\d+)/.exec(info);
        if (!match) return;
        pid = Number(match[1]);
        reportedPid = pid;
        if (group && blockFd !== undefined) {
          // The init is still blocked on --block-fd and has forked nothing: moving it (and
          // bwrap, its monitor) now puts every process the computer will ever have in the group.
          try {
            group.admit([child.pid ?? pid, pid]);
          } catch (error) {
            admitError = error instanceof Error ? error.message : String(error);
            resolve(undefined);
            return;
          }
          const release = (child.stdio as unknown[])[blockFd] as Writable;
          release.on("error", () => undefined);
          release.end("x");
        }
        settle();
      });
      const status = child.stdio[STATUS_FD] as Readable;
      const onReady = (chunk: Buffer) => {
        if (!chunk.toString("utf8").startsWith("ready\n")) return;
        status.off("data", onReady);
        ready = true;
        settle();
      };
      status.on("data", onReady);
      child.once("error", () => resolve(undefined));
      child.once("exit", () => resolve(undefined));
    });
    const init = initPid !== undefined ? identify(initPid) : undefined;
    if (!init || child.exitCode !== null || child.signalCode !== null) {
      await abandon(child, reportedPid);
      const why = admitError
        ? `it could not be put into its control group: ${admitError}`
        : diagnostics.text.trim() || "bwrap exited";
      throw new Error(`The computer's sandbox did not start: ${why}`);
    }
    return new ResidentSandbox(child, init, spec.controlDir, diagnostics);
  }

  alive(): boolean {
    return !this.exited;
  }

  /** Resolves when the sandbox process exits for any reason. */
  whenExited(): Promise<void> {
    return this.exitedPromise;
  }

  /** Output files of the command currently (or last) run. */
  outputPaths(): { stdout: string; stderr: string } {
    return {
      stdout: join(this.controlDir, `${this.sequence}.out`),
      stderr: join(this.controlDir, `${this.sequence}.err`),
    };
  }

  /**
   * Runs one command; `stop` resolving first terminates the whole sandbox (the only way to be
   * sure every process the command started is gone).
   */
  async exec(command: string, stop: Promise<void>, confirmStopMs: number): Promise<ExecEnd> {
    if (this.exited) return { kind: "lost" };
    this.sequence++;
    const status = new Promise<string | undefined>((resolve) => {
      this.statusWaiter = resolve;
    });
    this.child.stdin?.write(commandFrame(command));
    const first = await Promise.race([status, stop.then(() => "stop" as const)]);
    this.statusWaiter = undefined;
    if (first === "stop")
      return { kind: "stopped", confirmed: await this.terminate(confirmStopMs) };
    if (first === undefined) {
      // Make sure the namespace really is gone before calling it lost rather than unknown.
      return (await this.terminate(confirmStopMs))
        ? { kind: "lost" }
        : { kind: "stopped", confirmed: false };
    }
    const [, code] = first.split(" ");
    return { kind: "exited", exitCode: Number(code) };
  }

  /** Kills the sandbox; resolves whether its PID namespace is confirmed gone. */
  async terminate(confirmWithinMs: number): Promise<boolean> {
    try {
      process.kill(this.init.pid, "SIGKILL");
    } catch {
      // Already gone; confirmed below.
    }
    this.child.kill("SIGKILL");
    return waitForExit(this.init, confirmWithinMs);
  }

  /** What the loop or bwrap printed on their own, for messages when something breaks. */
  lastDiagnostics(): string {
    return this.diagnostics.text.trim();
  }

  private onStatus(text: string): void {
    this.statusBuffer += text;
    for (;;) {
      const end = this.statusBuffer.indexOf("\n");
      if (end < 0) return;
      const line = this.statusBuffer.slice(0, end);
      this.statusBuffer = this.statusBuffer.slice(end + 1);
      // Lines for earlier commands cannot arrive (commands are serial); match anyway.
      if (line.startsWith(`${this.sequence} `)) this.statusWaiter?.(line);
    }
  }
}

function spawnBwrap(
  host: SandboxHost,
  spec: Omit<SandboxSpec, "infoFd" | "blockFd" | "seccompFd">,
  blockFd: number | undefined,
): ChildProcess {
  const args = buildBwrapArgs(host, {
    ...spec,
    infoFd: INFO_FD,
    blockFd,
    seccompFd: SECCOMP_FD,
  });
  const child = spawn(host.bwrapPath, args, {
    env: sandboxEnv(),
    stdio: ["pipe", "pipe", "pipe", "pipe", "pipe", blockFd ? "pipe" : "ignore", "pipe"],
    // As root we drop to nobody before bwrap runs, so bwrap builds an unprivileged user
    // namespace and files the computer writes belong to that uid, never to root.
    ...(host.runningAsRoot ? { uid: SANDBOX_UID, gid: SANDBOX_GID } : {}),
  });
  const seccomp = (child.stdio as unknown[])[SECCOMP_FD] as Writable;
  seccomp.on("error", () => undefined);
  filter ??= seccompFilter();
  seccomp.end(filter);
  return child;
}

/**
 * A start that failed: kill bwrap and the sandbox's init (which may still be blocked on
 * --block-fd) and wait until both are gone, since they may already be in the control group,
 * which cannot be removed while they exist.
 */
async function abandon(child: ChildProcess, reportedPid: number | undefined): Promise<void> {
  if (reportedPid !== undefined) {
    try {
      process.kill(reportedPid, "SIGKILL");
    } catch {
      // Already gone.
    }
  }
  child.kill("SIGKILL");
  if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) {
    await new Promise((resolve) => child.once("exit", resolve));
  }
  const reported = reportedPid !== undefined ? identify(reportedPid) : undefined;
  if (reported) await waitForExit(reported, 1000);
}
