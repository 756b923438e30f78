import { execFileSync } from "node:child_process";
import { existsSync, lstatSync, readlinkSync } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";

/**
 * What this host offers the sandbox, discovered once per provider: paths to binaries and the
 * shape of the root directories (merged-/usr hosts have /bin etc. as symlinks).
 */
export interface SandboxHost {
  bwrapPath: string;
  /** Absent when util-linux' prlimit is missing; then no rlimits are applied (and reported). */
  prlimitPath: string | undefined;
  /** bash: the computer's loop relies on `read -N`. */
  shellPath: string;
  /**
   * Top-level system entries: either mirrored as symlinks or bound read-only from `source`
   * (the same path on the host, or inside the operator's image).
   */
  systemEntries: Array<{ path: string; symlinkTo?: string; source?: string }>;
  /** Where /etc's few entries come from: "/" (the host) or the image directory. */
  root: string;
  /** Whether the runtime is root and so must drop to an unprivileged host uid itself. */
  runningAsRoot: boolean;
}

/**
 * The uid/gid sandboxed code runs as inside the sandbox and, when the runtime is root, on the
 * host too (bwrap is started as this uid so its user namespace maps nobody to nobody).
 */
export const SANDBOX_UID = 65534;
export const SANDBOX_GID = 65534;

export class BubblewrapMissingError extends Error {
  readonly code = "bubblewrap_missing";
}

const SYSTEM_DIRS = ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"];

function which(name: string): string | undefined {
  for (const dir of ["/usr/bin", "/bin", "/usr/local/bin", "/usr/sbin", "/sbin"]) {
    if (existsSync(`${dir}/${name}`)) return `${dir}/${name}`;
  }
  try {
    const found = execFileSync("sh", ["-c", `command -v ${name}`], { encoding: "utf8" }).trim();
    return found || undefined;
  } catch {
    return undefined;
  }
}

/**
 * What the sandbox is built from. With `imageDir` (an operator's package image, e.g. made with
 * debootstrap), the system directories and /etc entries come from that directory instead of
 * the host; relative symlinks (merged /usr) are mirrored, absolute ones followed.
 */
export function discoverSandboxHost(imageDir?: string): SandboxHost {
  const bwrapPath = which("bwrap");
  if (!bwrapPath) {
    throw new BubblewrapMissingError(
      "bubblewrap (bwrap) is not installed; computers cannot run commands unsandboxed. " +
        "Run packages/computers/scripts/ensure-bubblewrap.sh or install the 'bubblewrap' package.",
    );
  }
  const root = imageDir ? resolve(imageDir) : "/";
  if (!existsSync(join(root, "bin/bash"))) {
    throw new BubblewrapMissingError(
      `bash is required at ${join(root, "bin/bash")} for the computer's loop.`,
    );
  }
  const systemEntries: SandboxHost["systemEntries"] = [];
  for (const path of SYSTEM_DIRS) {
    const source = join(root, path);
    if (!existsSync(source)) continue;
    const stat = lstatSync(source);
    const link = stat.isSymbolicLink() ? readlinkSync(source) : undefined;
    if (link !== undefined && !isAbsolute(link)) systemEntries.push({ path, symlinkTo: link });
    else systemEntries.push(root === "/" && link === undefined ? { path } : { path, source });
  }
  return {
    bwrapPath,
    prlimitPath: which("prlimit"),
    shellPath: "/bin/bash",
    systemEntries,
    root,
    runningAsRoot: process.getuid?.() === 0,
  };
}
