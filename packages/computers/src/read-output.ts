import { open, unlink } from "node:fs/promises";

/**
 * Reads at most `limitBytes` of a command's output file. Output goes to files, so a command
 * printing gigabytes costs disk (capped by RLIMIT_FSIZE), never runtime memory.
 */
export async function readBounded(
  path: string,
  limitBytes: number,
): Promise<{ text: string; truncated: boolean }> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(path, "r");
  } catch {
    // The command never got as far as its redirection (e.g. killed while starting).
    return { text: "", truncated: false };
  }
  try {
    const { size } = await handle.stat();
    const buffer = Buffer.alloc(Math.min(size, limitBytes));
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    // A cut may split a multi-byte character; the decoder replaces the fragment with U+FFFD.
    return { text: buffer.subarray(0, bytesRead).toString("utf8"), truncated: size > limitBytes };
  } finally {
    await handle.close();
  }
}

export async function removeQuietly(...paths: string[]): Promise<void> {
  await Promise.all(paths.map((p) => unlink(p).catch(() => undefined)));
}
