// The store's files hold every session's messages, tool inputs and outputs: they are the owner's
// only (0600), like the secret key beside them. SQLite creates the WAL, shared-memory and
// rollback-journal files with the database file's own mode (and fchmods a new file to exactly
// that mode, so the umask does not matter), so creating the database 0600 before SQLite opens it
// covers them all; files an earlier version left 0644 are tightened when the store opens them.

import { chmodSync, closeSync, constants, existsSync, openSync } from "node:fs";

const OWNER_ONLY = 0o600;
/** The files SQLite (and our commit journal, `-oclog`) keep beside the database. */
const COMPANIONS = ["-wal", "-shm", "-journal", "-oclog"];

/** Creates `path` 0600 when missing, and makes it and its companions 0600 when present. */
export function protectStoreFiles(path: string): void {
  if (path === ":memory:" || path === "" || path.startsWith("file:")) return;
  try {
    // O_EXCL: a file that appears meanwhile is another process's, and tightened below instead.
    closeSync(
      openSync(path, constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY, OWNER_ONLY),
    );
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  }
  for (const file of [path, ...COMPANIONS.map((suffix) => path + suffix)]) tighten(file);
}

/** chmod, exact whatever the umask; a file another user owns is left to its owner. */
export function tighten(file: string): void {
  if (!existsSync(file)) return;
  try {
    chmodSync(file, OWNER_ONLY);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EPERM") throw error;
  }
}
