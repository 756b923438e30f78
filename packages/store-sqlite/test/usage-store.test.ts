// The UsageStore conformance suite on the embedded store, on a file with group commit (the
// trigger's rows must be journaled and flushed with their events) and in memory.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { usageStoreConformance } from "@opencomputer/testkit/usage-conformance";
import { createSqliteStore, createSqliteUsageStore } from "../src/index.ts";

usageStoreConformance("sqlite (file, group commit)", async () => {
  const dir = mkdtempSync(join(tmpdir(), "oc-usage-"));
  const store = createSqliteStore({ path: join(dir, "store.db") });
  return {
    store,
    usage: createSqliteUsageStore(store),
    close: async () => {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

usageStoreConformance("sqlite (memory)", async () => {
  const store = createSqliteStore({ path: ":memory:" });
  return { store, usage: createSqliteUsageStore(store), close: () => store.close() };
});
