import { SANDBOX_GID, SANDBOX_UID, type SandboxHost } from "@opencomputer/sandbox";
import { CONTROL_DIR, SANDBOX_LOOP } from "./sandbox-loop.ts";

export interface SandboxLimits {
  /** RLIMIT_NPROC, counted in the computer's own user namespace: contains fork bombs. */
  maxProcesses: number;
  /** RLIMIT_AS per process, in bytes: bounds each process, not their sum (see totalMemoryBytes). */
  maxMemoryBytes: number;
  /** RLIMIT_FSIZE, in bytes: the largest single file a command may write. */
  maxFileBytes: number;
  /**
   * Disk the computer may use in /workspace plus its output files, in allocated bytes
   * (measured by the runtime while the computer lives; see disk-quota.ts).
   */
  workspaceBytes: number;
  /** Files, directories and links in /workspace plus output files (same measurement). */
  workspaceEntries: number;
  /** Size of /tmp, a tmpfs (the kernel enforces it: ENOSPC); its pages count as memory. */
  tmpBytes: number;
  /** Memory of all the computer's processes together, in bytes (cgroup; when available). */
  totalMemoryBytes: number;
  /** Tasks (processes and threads) in the computer at once (cgroup pids; when available). */
  maxTasks: number;
  /** CPU the whole computer may use, in cores, e.g. 0.5 (cgroup CPU quota; when available). */
  cpus: number;
}

export interface SandboxSpec {
  workspaceDir: string;
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
  /** fd number where bwrap reads the compiled seccomp filter (see @opencomputer/sandbox). */
  seccompFd: number;
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
    // No bwrap init: the loop is PID 1 itself. bwrap's own init would be the one process in
    // the sandbox without the seccomp filter, and the sandbox user may write its memory
    // (/proc/1/mem) — a way around the filter. bash reaps orphans like an init would.
    "--as-pid-1",
    "--seccomp",
    String(spec.seccompFd),
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
    // A size-limited tmpfs: the kernel enforces /tmp's quota, and it vanishes with the computer.
    "--size",
    String(spec.limits.tmpBytes),
    "--tmpfs",
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
    const { maxProcesses, maxMemoryBytes } = spec.limits;
    // No single file larger than the disk quota: bounds how far one write can overshoot it.
    const maxFileBytes = Math.min(spec.limits.maxFileBytes, spec.limits.workspaceBytes);
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
