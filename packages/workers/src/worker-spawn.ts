// Starting one worker process with its limits: the Node command (with the V8 heap limit), the
// launcher's wrapping (a sandbox applies rlimits inside), the control group it joins before any
// agent code runs, and what its stderr said last (to tell a heap exhaustion from a crash).

import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import type { Readable, Writable } from "node:stream";
import type { AgentLocation } from "@opencomputer/runtime";
import {
  type Admission,
  CHILD_SCRIPT,
  TSX_LOADER,
  type WorkerCommand,
  type WorkerLauncher,
} from "./worker-command.ts";
import type { WorkerGroup, WorkerGroups } from "./worker-groups.ts";
import { heapMiB, MIB, type WorkerLimits } from "./worker-limits.ts";

/** fds 0-2 are stdio and 3 the IPC channel; bwrap reports on 4, waits on 5, reads seccomp on 6. */
const ADMISSION: Admission = { infoFd: 4, blockFd: 5 };
const SECCOMP_FD = 6;
const PRLIMIT = "/usr/bin/prlimit";
const STDERR_TAIL = 4096;

export interface SpawnRequest {
  location: AgentLocation;
  env: Record<string, string>;
  limits: WorkerLimits;
  launcher?: WorkerLauncher;
  network: boolean;
  bridgeDir?: string;
  groups?: WorkerGroups;
}

export interface SpawnedWorker {
  child: ChildProcess;
  group: WorkerGroup | undefined;
  /** The last few KiB the worker wrote to stderr (also passed on to ours). */
  stderrTail(): string;
  /** Rejects when the worker could not be put in its group (it is killed then). */
  admitted: Promise<void>;
}

/** The plain Node command; without a sandbox, rlimits through prlimit when the host has it. */
function nodeCommand(request: SpawnRequest): WorkerCommand {
  const { limits } = request;
  const node = [`--max-old-space-size=${heapMiB(limits)}`, "--import", TSX_LOADER, CHILD_SCRIPT];
  const base = { cwd: request.location.cwd, env: request.env };
  // A sandbox applies them inside (with a process count, which on the host would count every
  // process of the runtime's user, not just the worker's).
  if (request.launcher || !existsSync(PRLIMIT)) {
    return { ...base, command: process.execPath, args: node };
  }
  return {
    ...base,
    command: PRLIMIT,
    args: [...fileRlimits(limits), "--", process.execPath, ...node],
  };
}

/** prlimit arguments every worker gets: the size of one file and the open descriptors. */
export function fileRlimits(limits: WorkerLimits): string[] {
  const fsize = limits.maxFileMiB * MIB;
  return [`--fsize=${fsize}:${fsize}`, `--nofile=${limits.maxOpenFiles}:${limits.maxOpenFiles}`];
}

export function spawnWorker(request: SpawnRequest): SpawnedWorker {
  let group: WorkerGroup | undefined;
  let refused: Error | undefined;
  try {
    group = request.groups?.create(request.limits);
  } catch (error) {
    // The host allowed the probe but not this group: the worker does not start unbounded.
    refused = admissionError(error);
  }
  let command = nodeCommand(request);
  if (request.launcher) {
    command = request.launcher(command, {
      location: request.location,
      network: request.network,
      ...(request.bridgeDir ? { bridgeDir: request.bridgeDir } : {}),
      limits: request.limits,
      ...(group ? { admission: ADMISSION } : {}),
      seccompFd: SECCOMP_FD,
    });
  }
  const gated = group !== undefined && command.admission !== undefined;
  const inputs = command.inputs ?? [];
  let child: ChildProcess;
  try {
    child = spawn(command.command, command.args, {
      cwd: command.cwd,
      ...(command.uid !== undefined ? { uid: command.uid } : {}),
      ...(command.gid !== undefined ? { gid: command.gid } : {}),
      // Never process.env: the worker gets exactly the variables given, no secret among them.
      env: command.env,
      stdio: stdioFor(gated, inputs),
      serialization: "json",
    });
  } catch (error) {
    void group?.remove();
    throw error;
  }
  for (const { fd, data } of inputs) {
    const pipe = (child.stdio as unknown as Writable[])[fd]!;
    pipe.on("error", () => {});
    pipe.end(data);
  }
  let tail = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    process.stderr.write(chunk);
    tail = (tail + chunk.toString("utf8")).slice(-STDERR_TAIL);
  });
  const admitted = refused
    ? Promise.reject(refused)
    : gated
      ? admitWhenReported(child, group!, command.admission!)
      : admitNow(child, group);
  admitted.catch(() => {
    child.kill("SIGKILL");
    void group?.remove();
    group = undefined;
  });
  return { child, group, stderrTail: () => tail, admitted };
}

/** stdio, the IPC channel, and a pipe for each fd the admission and the inputs use. */
function stdioFor(
  gated: boolean,
  inputs: Array<{ fd: number }>,
): Array<"ignore" | "inherit" | "pipe" | "ipc"> {
  const stdio: Array<"ignore" | "inherit" | "pipe" | "ipc"> = ["ignore", "inherit", "pipe", "ipc"];
  const fds = [...(gated ? [ADMISSION.infoFd, ADMISSION.blockFd] : []), ...inputs.map((i) => i.fd)];
  for (const fd of fds) {
    while (stdio.length <= fd) stdio.push("ignore");
    stdio[fd] = "pipe";
  }
  return stdio;
}

/**
 * Without a gate (a plain worker, or a launcher that cannot wait) the process joins at once: no
 * agent code runs before the handshake, which needs this process's first message.
 */
function admitNow(child: ChildProcess, group: WorkerGroup | undefined): Promise<void> {
  if (!group || child.pid === undefined) return Promise.resolve();
  try {
    group.admit([child.pid]);
    return Promise.resolve();
  } catch (error) {
    return Promise.reject(admissionError(error));
  }
}

/**
 * bwrap's sandbox waits on the block fd until it is in the group: it and bwrap are admitted
 * before it has forked anything, so every process the worker will have starts in the group.
 */
function admitWhenReported(
  child: ChildProcess,
  group: WorkerGroup,
  admission: Admission,
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let info = "";
    const stdio = child.stdio as unknown as Array<Readable & Writable>;
    const report = stdio[admission.infoFd]!;
    report.on("error", () => {});
    report.on("data", (chunk: Buffer) => {
      info += chunk.toString("utf8");
      const match = /"child-pid"\s*:\s*(\d+)/.exec(info);
      if (!match) return;
      report.removeAllListeners("data");
      try {
        group.admit([...(child.pid !== undefined ? [child.pid] : []), Number(match[1])]);
      } catch (error) {
        reject(admissionError(error));
        return;
      }
      const release = stdio[admission.blockFd]!;
      release.on("error", () => {});
      release.end("x");
      resolve();
    });
    // Exiting before the report is a start failure the process reports itself.
    child.once("exit", () => resolve());
  });
}

function admissionError(error: unknown): Error {
  return new Error(
    `could not be put in its control group: ${error instanceof Error ? error.message : String(error)}`,
  );
}
