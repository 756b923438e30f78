// The MemoryStore conformance suite on SQLite: memory shares the session store's file and
// connection, with and without group commit.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { memoryConformance } from "@opencomputer/testkit/memory-conformance";
import { createSqliteMemoryStore, createSqliteStore } from "../src/index.ts";

for (const groupCommitMs of [5, 0]) {
  memoryConformance(`sqlite (groupCommitMs ${groupCommitMs})`, async () => {
    const dir = mkdtempSync(join(tmpdir(), "oc-memory-"));
    const store = createSqliteStore({ path: join(dir, "data.db"), groupCommitMs });
    return {
      memory: createSqliteMemoryStore(store),
      cleanup: async () => {
        await store.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  });
}
