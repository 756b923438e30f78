import { createHash } from "node:crypto";
import { statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";

/**
 * Where a provider keeps its computers' directories (workspaces/, scratch/).
 *
 * bwrap runs as the sandbox user (uid 65534) and resolves each bind source by path (bwrap
 * 0.8 even resolves `--bind-fd` sources with realpath), so every directory above them must be
 * traversable by that user. A project under a 0700 directory (a `mktemp -d`, /root) is not:
 * then the computers' directories go to a runtime-owned base instead,
 * `<fallbackDir>/<hash of rootDir>` (default /var/lib/opencomputer/computers/...), stable for
 * a given rootDir so workspaces persist across restarts.
 */

export const DEFAULT_FALLBACK_DIR = "/var/lib/opencomputer/computers";

export class ComputersDirError extends Error {
  readonly code = "computers_dir_unreachable";
  constructor(
    readonly path: string,
    message: string,
  ) {
    super(message);
  }
}

/** The first existing directory from / down to `dir` that uid/gid cannot traverse. */
export function firstUntraversable(
  dir: string,
  uid: number,
  gid: number,
): { path: string; mode: number } | undefined {
  const chain: string[] = [];
  for (let current = resolve(dir); ; current = dirname(current)) {
    chain.unshift(current);
    if (dirname(current) === current) break;
  }
  for (const path of chain) {
    let stats: ReturnType<typeof statSync>;
    try {
      stats = statSync(path);
    } catch {
      return undefined; // Not made yet: the provider creates it 0755.
    }
    const bit = stats.uid === uid ? 0o100 : stats.gid === gid ? 0o010 : 0o001;
    if ((stats.mode & bit) === 0) return { path, mode: stats.mode & 0o7777 };
  }
  return undefined;
}

/**
 * Picks the base directory, and the directories of it the provider may make traversable. Only as root does this matter: otherwise bwrap runs as the
 * runtime's own user, who can traverse its own directories.
 */
export function computersBase(
  rootDir: string,
  sandboxUser: { uid: number; gid: number } | undefined,
  fallbackDir: string = DEFAULT_FALLBACK_DIR,
): { base: string; owned: string[] } | { error: ComputersDirError } {
  const root = resolve(rootDir);
  if (!sandboxUser) return { base: root, owned: [root] };
  const { uid, gid } = sandboxUser;
  // rootDir itself is the provider's: it adds the execute bit there.
  if (!firstUntraversable(dirname(root), uid, gid)) return { base: root, owned: [root] };
  const hash = createHash("sha256").update(root).digest("hex").slice(0, 16);
  const fallback = resolve(fallbackDir);
  const base = join(fallback, hash);
  // The fallback directory is the runtime's too: the provider adds the execute bit there.
  const blocked = firstUntraversable(dirname(fallback), uid, gid);
  if (!blocked) return { base, owned: [fallback, base] };
  const mode = blocked.mode.toString(8).padStart(4, "0");
  return {
    error: new ComputersDirError(
      blocked.path,
      `Computers cannot run: the sandbox user (uid ${uid}) cannot reach ${root} nor the ` +
        `fallback ${base}, because ${blocked.path} (mode ${mode}) is not traversable by it. ` +
        `Run \`chmod o+x ${blocked.path}\`, or pass \`fallbackDir\` (a directory whose ` +
        "parents are all traversable by others) to BubblewrapComputerProvider.",
    ),
  };
}
