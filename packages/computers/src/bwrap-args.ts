import { SANDBOX_GID, SANDBOX_UID, type SandboxHost } from "@opencomputer/sandbox";
import { CONTROL_DIR, SANDBOX_LOOP } from "./sandbox-loop.ts";

export interface SandboxLimits {
  /** RLIMIT_NPROC, counted in the computer's own user namespace: contains fork bombs. */
  maxProcesses: number;
  /** RLIMIT_AS per process, in bytes: bounds each process, not their sum (see totalMemoryBytes). */
  maxMemoryBytes: number;
  /** RLIMIT_FSIZE, in bytes: the largest single file a command may write. */
  maxFileBytes: number;
  /** Memory of all the computer's processes together, in bytes (cgroup; when available). */
  totalMemoryBytes: number;
  /** Tasks (processes and threads) in the computer at once (cgroup pids; when available). */
  maxTasks: number;
  /** CPU the whole computer may use, in cores, e.g. 0.5 (cgroup CPU quota; when available). */
  cpus: number;
}

export interface SandboxSpec {
  workspaceDir: string;
  /** Host directory bound at /tmp; lives as long as the computer. */
  tmpDir: string;
  /** Host directory where the loop leaves each command's output files. */
  controlDir: string;
  allowNetwork: boolean;
  limits: SandboxLimits;
  /** fd number (in the bwrap process) where bwrap reports the sandbox init's host pid. */
  infoFd: number;
  /**
   * When set, the sandbox waits before running anything until a byte arrives on this fd, so
   * it can be put into its control group first and every process it forks starts there.
   */
  blockFd?: number;
}

/**
 * Only the parts of /etc a shell and common tools need: binding all of it would show the
 * sandbox host configuration it has no business reading.
 */
const ETC_ENTRIES = [
  "alternatives",
  "bash.bashrc",
  "ca-certificates",
  "ca-certificates.conf",
  "group",
  "hosts",
  "inputrc",
  "ld.so.cache",
  "ld.so.conf",
  "ld.so.conf.d",
  "localtime",
  "mime.types",
  "nsswitch.conf",
  "os-release",
  "passwd",
  "profile",
  "ssl",
];

export { SANDBOX_GID, SANDBOX_UID };

export function buildBwrapArgs(host: SandboxHost, spec: SandboxSpec): string[] {
  const args = [
    "--unshare-all",
    ...(spec.allowNetwork ? ["--share-net"] : []),
    "--die-with-parent",
    "--new-session",
    "--hostname",
    "computer",
    "--cap-drop",
    "ALL",
    "--uid",
    String(SANDBOX_UID),
    "--gid",
    String(SANDBOX_GID),
    "--info-fd",
    String(spec.infoFd),
    ...(spec.blockFd !== undefined ? ["--block-fd", String(spec.blockFd)] : []),
  ];
  for (const entry of host.systemEntries) {
    if (entry.symlinkTo !== undefined) args.push("--symlink", entry.symlinkTo, entry.path);
    else args.push("--ro-bind", entry.source ?? entry.path, entry.path);
  }
  const etc = host.root === "/" ? "/etc" : `${host.root}/etc`;
  for (const name of ETC_ENTRIES) args.push("--ro-bind-try", `${etc}/${name}`, `/etc/${name}`);
  args.push(
    "--proc",
    "/proc",
    "--dev",
    "/dev",
    "--bind",
    spec.tmpDir,
    "/tmp",
    "--bind",
    spec.controlDir,
    CONTROL_DIR,
    "--bind",
    spec.workspaceDir,
    "/workspace",
    // The root is bwrap's tmpfs, owned by the sandbox user: without this, `mkdir /x` works.
    "--remount-ro",
    "/",
    "--chdir",
    "/workspace",
    "--",
  );
  if (host.prlimitPath) {
    const { maxProcesses, maxMemoryBytes, maxFileBytes } = spec.limits;
    args.push(
      host.prlimitPath,
      `--nproc=${maxProcesses}:${maxProcesses}`,
      `--as=${maxMemoryBytes}:${maxMemoryBytes}`,
      `--fsize=${maxFileBytes}:${maxFileBytes}`,
      "--",
    );
  }
  // The loop needs bash (read -N); commands run under it too.
  args.push(host.shellPath, "--noprofile", "--norc", "-c", SANDBOX_LOOP);
  return args;
}

/** The only environment a command sees: the runtime's own variables (and secrets) stay out. */
export function sandboxEnv(): Record<string, string> {
  return {
    PATH: "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin",
    HOME: "/workspace",
    TMPDIR: "/tmp",
    LANG: "C.UTF-8",
    TERM: "dumb",
    USER: "nobody",
  };
}
