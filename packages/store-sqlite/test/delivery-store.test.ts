// The DeliveryStore conformance suite on the embedded store: on a file with group commit (the
// outbox trigger runs in the group's transaction) and in memory.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { deliveryStoreConformance } from "@opencomputer/testkit/delivery-conformance";
import { createSqliteDeliveryStore, createSqliteStore } from "../src/index.ts";

deliveryStoreConformance("sqlite (file, group commit)", async () => {
  const dir = mkdtempSync(join(tmpdir(), "oc-deliveries-"));
  const store = createSqliteStore({ path: join(dir, "store.db") });
  return {
    store,
    deliveries: createSqliteDeliveryStore(store),
    close: async () => {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

deliveryStoreConformance("sqlite (memory)", async () => {
  const store = createSqliteStore({ path: ":memory:" });
  return { store, deliveries: createSqliteDeliveryStore(store), close: () => store.close() };
});
