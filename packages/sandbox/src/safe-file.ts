import { constants, type Stats } from "node:fs";
import { type FileHandle, open } from "node:fs/promises";

/**
 * Opening files a sandbox can write. Whatever a sandbox can write (its output files, its
 * workspace) is hostile: it may have been replaced with a symlink to a host file (the runtime
 * is often root, so following it would read /etc/shadow), a FIFO (a blocking open() would
 * hold a libuv threadpool thread forever and, after four of them, stall every fs call of the
 * server), a socket or a hard link. So: O_NOFOLLOW (a symlink as the last component fails
 * with ELOOP), O_NONBLOCK (opening a FIFO returns at once instead of waiting for a writer),
 * then fstat on the opened descriptor — not on the path, which could change in between — and
 * anything but a plain regular file is refused.
 *
 * Only the last component is protected: callers must make sure the sandbox cannot write the
 * directories above it (the runtime creates and owns them).
 */

export type UnsafeFileReason =
  | "symlink"
  | "fifo"
  | "socket"
  | "not_regular"
  | "hard_linked"
  | "foreign_owner";

export class UnsafeFileError extends Error {
  readonly code = "unsafe_file";
  constructor(
    readonly path: string,
    readonly reason: UnsafeFileReason,
    detail: string,
  ) {
    super(`Refused to open ${path}: ${detail}`);
  }
}

export interface SafeOpenOptions {
  /**
   * The uid the file must belong to (the sandbox's). A file the sandbox creates is its own; a
   * file of another owner there was not written by it (e.g. a hard link to someone else's).
   */
  ownerUid?: number;
}

const FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

function kindOf(stats: Stats): UnsafeFileReason | undefined {
  if (stats.isFIFO()) return "fifo";
  if (stats.isSocket()) return "socket";
  if (stats.isSymbolicLink()) return "symlink";
  return stats.isFile() ? undefined : "not_regular";
}

/**
 * Opens `path` for reading only if it is a regular file with one link (and the given owner),
 * never following a symlink and never blocking. ENOENT is rethrown as is (the caller decides
 * what a missing file means); every unsafe case throws UnsafeFileError.
 */
export async function openRegularNoFollow(
  path: string,
  options: SafeOpenOptions = {},
): Promise<{ handle: FileHandle; stats: Stats }> {
  let handle: FileHandle;
  try {
    handle = await open(path, FLAGS);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ELOOP") throw new UnsafeFileError(path, "symlink", "it is a symbolic link");
    // A UNIX socket cannot be opened at all.
    if (code === "ENXIO") throw new UnsafeFileError(path, "socket", "it is a socket");
    throw error;
  }
  try {
    const stats = await handle.stat();
    const kind = kindOf(stats);
    if (kind) throw new UnsafeFileError(path, kind, `it is a ${kind.replace("_", " ")} file`);
    // Another name for the same inode may be one the sandbox cannot see (or a file of
    // another user): a hard-linked file is never something the sandbox just wrote.
    if (stats.nlink !== 1) {
      throw new UnsafeFileError(path, "hard_linked", `it has ${stats.nlink} hard links`);
    }
    if (options.ownerUid !== undefined && stats.uid !== options.ownerUid) {
      throw new UnsafeFileError(
        path,
        "foreign_owner",
        `it belongs to uid ${stats.uid}, not ${options.ownerUid}`,
      );
    }
    return { handle, stats };
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/**
 * Reads at most `limitBytes` from the start of a file opened with openRegularNoFollow. The
 * size is taken from the descriptor, so a file growing meanwhile cannot make this read more.
 */
export async function readRegularNoFollow(
  path: string,
  limitBytes: number,
  options: SafeOpenOptions = {},
): Promise<{ bytes: Buffer; size: number }> {
  const { handle, stats } = await openRegularNoFollow(path, options);
  try {
    const buffer = Buffer.alloc(Math.min(stats.size, limitBytes));
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    return { bytes: buffer.subarray(0, bytesRead), size: stats.size };
  } finally {
    await handle.close();
  }
}
