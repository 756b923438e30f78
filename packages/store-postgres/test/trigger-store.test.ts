// The TriggerStore conformance suite on PostgreSQL, a database per test on a private cluster.
import { type PrivateCluster, startPrivateCluster } from "@opencomputer/testkit/postgres-cluster";
import { triggerStoreConformance } from "@opencomputer/testkit/trigger-conformance";
import { afterAll, beforeAll } from "vitest";
import { createPostgresStore, createPostgresTriggerStore } from "../src/index.ts";

let cluster: PrivateCluster;

beforeAll(async () => {
  cluster = await startPrivateCluster();
}, 60_000);

afterAll(async () => {
  await cluster?.stop();
});

triggerStoreConformance("postgres", async () => {
  const database = await cluster.createDatabase();
  const store = await createPostgresStore({ connectionString: cluster.connectionString(database) });
  return {
    triggers: createPostgresTriggerStore(store),
    close: async () => {
      await store.close();
      await cluster.dropDatabase(database);
    },
  };
});
