// The UsageStore conformance suite on PostgreSQL, a database per test on a private cluster.
import { type PrivateCluster, startPrivateCluster } from "@opencomputer/testkit/postgres-cluster";
import { usageStoreConformance } from "@opencomputer/testkit/usage-conformance";
import { afterAll, beforeAll } from "vitest";
import { createPostgresStore, createPostgresUsageStore } from "../src/index.ts";

let cluster: PrivateCluster;

beforeAll(async () => {
  cluster = await startPrivateCluster();
}, 60_000);

afterAll(async () => {
  await cluster?.stop();
});

usageStoreConformance("postgres", async () => {
  const database = await cluster.createDatabase();
  const store = await createPostgresStore({ connectionString: cluster.connectionString(database) });
  return {
    store,
    usage: createPostgresUsageStore(store),
    close: async () => {
      await store.close();
      await cluster.dropDatabase(database);
    },
  };
});
