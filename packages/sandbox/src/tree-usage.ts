import { constants } from "node:fs";
import { type FileHandle, lstat, open, opendir } from "node:fs/promises";

/**
 * How much disk a directory tree the sandbox can write uses: allocated blocks (a sparse file
 * costs what it really occupies), each hard-linked inode once, plus the number of entries.
 *
 * The sandbox may rename, swap or replace anything in the tree while it is walked, so no path
 * below the root is ever resolved from the top: each directory is opened with
 * O_DIRECTORY|O_NOFOLLOW relative to its parent's open descriptor (through
 * /proc/self/fd/<fd>/<name>, Node's stand-in for openat), listed through that descriptor, and
 * its entries are lstat'ed (never followed). A directory swapped for a symlink fails to open
 * and is counted as the link it now is. The walk never reads or changes a file.
 *
 * Bounded: it stops as soon as the bytes or entries pass the caller's bound, and refuses to
 * descend deeper than `maxDepth` (each level holds two descriptors).
 */

export interface TreeBounds {
  /** Stop once more than this many bytes are counted (the answer is then "over"). */
  stopAboveBytes: number;
  /** Stop once more than this many entries are counted. */
  stopAboveEntries: number;
  /** Directories nested deeper than this are not descended into (reported as tooDeep). */
  maxDepth: number;
}

export interface TreeUsage {
  bytes: number;
  entries: number;
  /** False when the walk stopped at a bound: the real figures are at least these. */
  complete: boolean;
  /** Set when some directory was nested deeper than maxDepth. */
  tooDeep: boolean;
}

// O_NONBLOCK too: a FIFO swapped in after readdir fails O_DIRECTORY before any wait, but
// nothing here may ever wait on the sandbox.
const DIR_FLAGS =
  constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

class Walk {
  readonly usage: TreeUsage = { bytes: 0, entries: 0, complete: true, tooDeep: false };
  private readonly linked = new Set<number>();

  constructor(private readonly bounds: TreeBounds) {}

  over(): boolean {
    const { bytes, entries } = this.usage;
    return bytes > this.bounds.stopAboveBytes || entries > this.bounds.stopAboveEntries;
  }

  count(blocks: number, nlink: number, ino: number, isDir: boolean): void {
    // Directories always have several links (".", ".."), files only when hard-linked.
    if (!isDir && nlink > 1) {
      if (this.linked.has(ino)) return;
      this.linked.add(ino);
    }
    this.usage.bytes += blocks * 512;
  }

  async directory(handle: FileHandle, depth: number): Promise<void> {
    const here = `/proc/self/fd/${handle.fd}`;
    const dir = await opendir(here, { bufferSize: 128 });
    for await (const entry of dir) {
      this.usage.entries++;
      if (this.over()) {
        this.usage.complete = false;
        return; // for-await closes the Dir.
      }
      const path = `${here}/${entry.name}`;
      if (entry.isDirectory() && depth < this.bounds.maxDepth) {
        const child = await open(path, DIR_FLAGS).catch(() => undefined);
        if (child) {
          try {
            const stats = await child.stat();
            this.count(stats.blocks, stats.nlink, stats.ino, true);
            await this.directory(child, depth + 1);
          } finally {
            await child.close();
          }
          if (this.over()) return;
          continue;
        }
      } else if (entry.isDirectory()) {
        this.usage.tooDeep = true;
      }
      // Files, links, FIFOs... and a directory replaced by something else meanwhile.
      const stats = await lstat(path).catch(() => undefined);
      if (stats) this.count(stats.blocks, stats.nlink, stats.ino, stats.isDirectory());
    }
  }
}

/** Measures the tree under `root` (which must not itself be writable by the sandbox's parent). */
export async function measureTree(root: string, bounds: TreeBounds): Promise<TreeUsage> {
  const walk = new Walk(bounds);
  const handle = await open(root, DIR_FLAGS);
  try {
    const stats = await handle.stat();
    walk.count(stats.blocks, stats.nlink, stats.ino, true);
    await walk.directory(handle, 0);
  } finally {
    await handle.close();
  }
  return walk.usage;
}
