// Worker processes inside bubblewrap, isolated as the computers' sandboxes are
// (packages/computers/src/bwrap-args.ts): all namespaces unshared, capabilities dropped, an
// unprivileged uid, a tmpfs root with the system directories read-only, a private /proc (the
// control plane's processes do not exist in it) and /tmp. Unlike a computer it gets no
// writable workspace: only the runtime's own code, the deployment and what its location names,
// all read-only. By default it has no network (the gateway bridge carries egress); with
// `network: "host"` (createWorkerExecution) default sessions share the host's, microvm sessions never do. Inside,
// prlimit applies the rlimits a control group cannot (file size, open files) and a process count.

import { existsSync, lstatSync, readFileSync, readlinkSync, realpathSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, isAbsolute, join } from "node:path";
import { fileURLToPath } from "node:url";
import { seccompFilter } from "@opencomputer/sandbox";
import { CHILD_SCRIPT, type WorkerCommand, type WorkerLauncher } from "./worker-command.ts";
import type { WorkerLimits } from "./worker-limits.ts";
import { fileRlimits } from "./worker-spawn.ts";

/** The uid/gid the worker runs as, inside the sandbox and (for a root runtime) on the host. */
export const WORKER_UID = 65534;
export const WORKER_GID = 65534;

const SYSTEM_DIRS = ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"];
/** The few /etc entries Node and TLS need; the rest of the host's configuration stays out. */
const ETC_ENTRIES = [
  "ca-certificates",
  "ca-certificates.conf",
  "group",
  "hosts",
  "ld.so.cache",
  "ld.so.conf",
  "ld.so.conf.d",
  "localtime",
  "nsswitch.conf",
  "passwd",
  "resolv.conf",
  "ssl",
];

export interface BwrapLauncherOptions {
  bwrapPath?: string;
  /** More host paths every worker may read (e.g. a shared node_modules outside the project). */
  readPaths?: string[];
  /** util-linux' prlimit (default /usr/bin/prlimit); without it no rlimits are applied. */
  prlimitPath?: string;
}

export function bwrapAvailable(path = "/usr/bin/bwrap"): boolean {
  return existsSync(path);
}

export function bwrapLauncher(options: BwrapLauncherOptions = {}): WorkerLauncher {
  const bwrap = options.bwrapPath ?? "/usr/bin/bwrap";
  // The runtime's code and its dependencies: what `node --import tsx child.ts` loads.
  const runtimePaths = [packageRoot(CHILD_SCRIPT), ...installPaths()];
  const prlimit = options.prlimitPath ?? "/usr/bin/prlimit";
  return (command, context): WorkerCommand => {
    const { location, network, bridgeDir, limits, admission, seccompFd } = context;
    const args = [
      "--unshare-all",
      ...(network ? ["--share-net"] : []),
      // The filter (@opencomputer/sandbox) refuses new namespaces, mounts and risky kernel
      // interfaces; Node needs none of them (its threads use clone without namespace flags).
      // With it, no bwrap init: Node is PID 1 itself, else the init would be the one process
      // left unfiltered, with memory the sandbox's uid may write (/proc/1/mem).
      ...(seccompFd !== undefined ? ["--seccomp", String(seccompFd), "--as-pid-1"] : []),
      ...(admission
        ? ["--info-fd", String(admission.infoFd), "--block-fd", String(admission.blockFd)]
        : []),
      "--die-with-parent",
      "--new-session",
      "--cap-drop",
      "ALL",
      "--uid",
      String(WORKER_UID),
      "--gid",
      String(WORKER_GID),
    ];
    for (const path of SYSTEM_DIRS) {
      if (!existsSync(path)) continue;
      const link = lstatSync(path).isSymbolicLink() ? readlinkSync(path) : undefined;
      if (link !== undefined && !isAbsolute(link)) args.push("--symlink", link, path);
      else args.push("--ro-bind", path, path);
    }
    for (const name of ETC_ENTRIES) args.push("--ro-bind-try", `/etc/${name}`, `/etc/${name}`);
    args.push("--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp");
    const read = new Set([
      ...runtimePaths,
      ...packageRoots(location.loader),
      ...location.readPaths,
      ...(options.readPaths ?? []),
    ]);
    for (const path of read) args.push("--ro-bind-try", path, path);
    // Connecting to a unix socket works on a read-only mount; it is all the bridge needs.
    if (bridgeDir) args.push("--ro-bind", bridgeDir, bridgeDir);
    // Hidden after the binds: a tmpfs over them leaves an empty directory.
    for (const path of location.hidePaths ?? []) {
      if (existsSync(path)) args.push("--tmpfs", path);
    }
    args.push("--remount-ro", "/", "--chdir", command.cwd, "--");
    if (limits && existsSync(prlimit)) args.push(prlimit, ...sandboxRlimits(limits), "--");
    args.push(command.command, ...command.args);
    const root = process.getuid?.() === 0;
    return {
      command: bwrap,
      args,
      cwd: "/",
      env: { ...command.env, HOME: "/tmp", TMPDIR: "/tmp" },
      ...(root ? { uid: WORKER_UID, gid: WORKER_GID } : {}),
      ...(admission ? { admission } : {}),
      ...(seccompFd !== undefined ? { inputs: [{ fd: seccompFd, data: filter() }] } : {}),
    };
  };
}

let compiled: Buffer | undefined;

/** The seccomp program, compiled once per process. */
function filter(): Buffer {
  compiled ??= seccompFilter();
  return compiled;
}

/**
 * The sandbox's rlimits. RLIMIT_NPROC counts the tasks of the worker's uid in its own user
 * namespace, so inside a sandbox it bounds the worker alone (on the host it would count every
 * process of the runtime's user). RLIMIT_AS is left alone: V8 reserves far more address space
 * than it uses, and a cap on it breaks Node; memory is the control group's and the heap's.
 */
function sandboxRlimits(limits: WorkerLimits): string[] {
  return [`--nproc=${limits.maxTasks}:${limits.maxTasks}`, ...fileRlimits(limits)];
}

/** The directory of the nearest package.json above `file`. */
function packageRoot(file: string): string {
  let dir = dirname(file);
  while (!existsSync(join(dir, "package.json")) && dirname(dir) !== dir) dir = dirname(dir);
  return dir;
}

/** The loader's package, and through symlinks its real place. */
function packageRoots(file: string): string[] {
  const root = packageRoot(file);
  return [root, realpathSync(root)];
}

/**
 * node_modules holding tsx (and, in a workspace, symlinks to our packages) plus the real
 * directories of the @opencomputer packages the worker imports: this package's dependencies and
 * theirs (the child loads the runtime's agent code, which loads the SDK and the protocol).
 */
function installPaths(): string[] {
  const require = createRequire(CHILD_SCRIPT);
  const tsx = require.resolve("tsx");
  const modules = tsx.slice(0, tsx.lastIndexOf("/node_modules/") + "/node_modules".length);
  const self = realpathSync(fileURLToPath(new URL("..", import.meta.url)));
  const found = new Set<string>([self]);
  const queue = [self];
  while (queue.length > 0) {
    const dir = queue.pop()!;
    const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as {
      dependencies?: Record<string, string>;
    };
    const from = createRequire(join(dir, "package.json"));
    for (const name of Object.keys(manifest.dependencies ?? {})) {
      if (!name.startsWith("@opencomputer/")) continue;
      const root = realpathSync(packageRoot(from.resolve(name)));
      if (found.has(root)) continue;
      found.add(root);
      queue.push(root);
    }
  }
  return [modules, ...found];
}
