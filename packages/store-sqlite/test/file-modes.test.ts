// The store holds every session's messages and tool outputs: its files are the owner's only, as
// the secret key beside them is, whatever the process's umask, and files an older version left
// readable by others are tightened when the store opens them.

import { chmodSync, existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sessionRecord } from "@opencomputer/testkit/store-conformance";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createSqliteStore } from "../src/index.ts";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "oc-modes-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const mode = (file: string) => statSync(file).mode & 0o777;
const SUFFIXES = ["", "-wal", "-shm", "-oclog"];

async function exercise(path: string, options: { groupCommitMs?: number } = {}) {
  const store = createSqliteStore({ path, ...options });
  const session = sessionRecord({ id: "ses_modes" });
  await store.createSession(session, [
    {
      type: "session.created",
      data: { agentId: session.agentId, deploymentId: session.deploymentId },
    },
  ]);
  return store;
}

describe("store file modes", () => {
  it("creates the database, its WAL and shared memory, and the commit journal 0600", async () => {
    const path = join(dir, "data.db");
    const store = await exercise(path);
    try {
      for (const suffix of SUFFIXES) {
        expect(existsSync(path + suffix), suffix).toBe(true);
        expect(mode(path + suffix), `data.db${suffix}`).toBe(0o600);
      }
    } finally {
      await store.close();
    }
  });

  it("without group commit too", async () => {
    const path = join(dir, "plain.db");
    const store = await exercise(path, { groupCommitMs: 0 });
    try {
      for (const suffix of ["", "-wal", "-shm"]) expect(mode(path + suffix), suffix).toBe(0o600);
    } finally {
      await store.close();
    }
  });

  it("tightens files an earlier version created readable by others", async () => {
    const path = join(dir, "old.db");
    await (await exercise(path)).close();
    for (const suffix of SUFFIXES) {
      if (!existsSync(path + suffix)) writeFileSync(path + suffix, "");
      chmodSync(path + suffix, 0o644);
    }
    const store = createSqliteStore({ path });
    try {
      for (const suffix of SUFFIXES) expect(mode(path + suffix), `old.db${suffix}`).toBe(0o600);
    } finally {
      await store.close();
    }
  });
});
