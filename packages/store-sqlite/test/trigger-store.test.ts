// The TriggerStore conformance suite on the embedded store, on a file with group commit (its
// statements must commit on their own, outside the engine's groups) and in memory.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { triggerStoreConformance } from "@opencomputer/testkit/trigger-conformance";
import { describe, expect, it } from "vitest";
import { createSqliteStore, createSqliteTriggerStore } from "../src/index.ts";

triggerStoreConformance("sqlite (file, group commit)", async () => {
  const dir = mkdtempSync(join(tmpdir(), "oc-triggers-"));
  const store = createSqliteStore({ path: join(dir, "store.db") });
  return {
    triggers: createSqliteTriggerStore(store),
    close: async () => {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

triggerStoreConformance("sqlite (memory)", async () => {
  const store = createSqliteStore({ path: ":memory:" });
  return { triggers: createSqliteTriggerStore(store), close: () => store.close() };
});

describe("SQLite trigger store", () => {
  it("is durable for another connection as soon as a write resolves", async () => {
    const dir = mkdtempSync(join(tmpdir(), "oc-triggers-"));
    const a = createSqliteStore({ path: join(dir, "store.db") });
    const b = createSqliteStore({ path: join(dir, "store.db") });
    try {
      const cursor = {
        projectId: "default",
        environment: "production",
        agentId: "a",
        scheduleId: "s",
      };
      await createSqliteTriggerStore(a).advanceScheduleCursor(cursor, "2026-01-01T00:00:00.000Z");
      expect(await createSqliteTriggerStore(b).scheduleCursor(cursor)).toBe(
        "2026-01-01T00:00:00.000Z",
      );
    } finally {
      await a.close();
      await b.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
