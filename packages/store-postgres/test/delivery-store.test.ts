// The DeliveryStore conformance suite on PostgreSQL, a database per test on a private cluster:
// events go through `oc_write`, and the outbox row is written by the trigger in its transaction.

import { deliveryStoreConformance } from "@opencomputer/testkit/delivery-conformance";
import { usePrivateCluster } from "@opencomputer/testkit/postgres-suite";
import { createPostgresDeliveryStore, createPostgresStore } from "../src/index.ts";

const cluster = usePrivateCluster();

deliveryStoreConformance("postgres", async () => {
  const database = await cluster().createDatabase();
  const store = await createPostgresStore({
    connectionString: cluster().connectionString(database),
  });
  return {
    store,
    deliveries: createPostgresDeliveryStore(store),
    close: async () => {
      await store.close();
      await cluster().dropDatabase(database);
    },
  };
});
