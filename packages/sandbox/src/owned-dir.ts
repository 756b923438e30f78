import { constants } from "node:fs";
import { mkdir, open } from "node:fs/promises";

/**
 * Creating (or re-using) a directory a sandbox will be given. `chown` and `chmod` take a path
 * and follow a symlink at its end, so as root a directory swapped for a link would hand some
 * host file to the sandbox user. Here the directory is opened with O_DIRECTORY|O_NOFOLLOW and
 * changed through that descriptor (fchown/fchmod): a link or a non-directory is refused.
 * The parent must already exist and be writable only by the runtime.
 */

export class UnsafeDirectoryError extends Error {
  readonly code = "unsafe_directory";
  constructor(
    readonly path: string,
    detail: string,
  ) {
    super(
      `Refused to use ${path} as a sandbox directory: ${detail}. Remove it (it is recreated) ` +
        "and make sure only the runtime can write its parent directory.",
    );
  }
}

export interface OwnedDirOptions {
  mode: number;
  /** Set both to hand the directory to the sandbox user (only possible as root). */
  uid?: number;
  gid?: number;
}

export async function ensureOwnedDir(path: string, options: OwnedDirOptions): Promise<void> {
  try {
    await mkdir(path, { mode: options.mode });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  }
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    const flags = constants.O_DIRECTORY | constants.O_NOFOLLOW | constants.O_NONBLOCK;
    handle = await open(path, constants.O_RDONLY | flags);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ELOOP") throw new UnsafeDirectoryError(path, "it is a symbolic link");
    if (code === "ENOTDIR") throw new UnsafeDirectoryError(path, "it is not a directory");
    throw error;
  }
  try {
    if (options.uid !== undefined && options.gid !== undefined) {
      await handle.chown(options.uid, options.gid);
    }
    await handle.chmod(options.mode);
  } finally {
    await handle.close();
  }
}
