import { unlink } from "node:fs/promises";
import { readRegularNoFollow, UnsafeFileError } from "@opencomputer/sandbox";

/**
 * A command's output file, read the only safe way: the sandbox can replace it with a symlink
 * to a host file, a FIFO (a blocking open would hang a libuv thread forever), a socket or a
 * hard link, so it is opened without following links or blocking and refused unless it is
 * the sandbox's own regular file (see readRegularNoFollow in @opencomputer/sandbox).
 * Output goes to files, so a command printing gigabytes costs disk (capped by RLIMIT_FSIZE and
 * the disk quota), never runtime memory.
 */
export type OutputRead =
  | { ok: true; text: string; truncated: boolean }
  | { ok: false; refused: string };

export async function readBounded(
  path: string,
  limitBytes: number,
  ownerUid: number | undefined,
): Promise<OutputRead> {
  try {
    const { bytes, size } = await readRegularNoFollow(path, limitBytes, { ownerUid });
    // A cut may split a multi-byte character; the decoder replaces the fragment with U+FFFD.
    return { ok: true, text: bytes.toString("utf8"), truncated: size > limitBytes };
  } catch (error) {
    if (error instanceof UnsafeFileError) return { ok: false, refused: error.reason };
    // The command never got as far as its redirection (e.g. killed while starting).
    return { ok: true, text: "", truncated: false };
  }
}

/** unlink removes a link itself, never its target, and does not open a FIFO. */
export async function removeQuietly(...paths: string[]): Promise<void> {
  await Promise.all(paths.map((p) => unlink(p).catch(() => undefined)));
}
