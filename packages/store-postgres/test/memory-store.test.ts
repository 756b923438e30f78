// The MemoryStore conformance suite on PostgreSQL (a private cluster, a database per test).
import { memoryConformance } from "@opencomputer/testkit/memory-conformance";
import { type PrivateCluster, startPrivateCluster } from "@opencomputer/testkit/postgres-cluster";
import { afterAll, beforeAll } from "vitest";
import { createPostgresMemoryStore, createPostgresStore } from "../src/index.ts";

let cluster: PrivateCluster;

beforeAll(async () => {
  cluster = await startPrivateCluster();
}, 60_000);

afterAll(async () => {
  await cluster?.stop();
});

memoryConformance("postgres", async () => {
  const database = await cluster.createDatabase();
  const store = await createPostgresStore({ connectionString: cluster.connectionString(database) });
  return {
    memory: createPostgresMemoryStore(store),
    cleanup: async () => {
      await store.close();
      await cluster.dropDatabase(database);
    },
  };
});
