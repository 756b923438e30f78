// The DeliveryStore conformance suite on PostgreSQL, a database per test on a private cluster:
// events go through `oc_write`, and the outbox row is written by the trigger in its transaction.

import { deliveryStoreConformance } from "@opencomputer/testkit/delivery-conformance";
import { type PrivateCluster, startPrivateCluster } from "@opencomputer/testkit/postgres-cluster";
import { afterAll, beforeAll } from "vitest";
import { createPostgresDeliveryStore, createPostgresStore } from "../src/index.ts";

let cluster: PrivateCluster;

beforeAll(async () => {
  cluster = await startPrivateCluster();
}, 60_000);

afterAll(async () => {
  await cluster?.stop();
});

deliveryStoreConformance("postgres", async () => {
  const database = await cluster.createDatabase();
  const store = await createPostgresStore({ connectionString: cluster.connectionString(database) });
  return {
    store,
    deliveries: createPostgresDeliveryStore(store),
    close: async () => {
      await store.close();
      await cluster.dropDatabase(database);
    },
  };
});
