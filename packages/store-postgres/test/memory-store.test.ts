// The MemoryStore conformance suite on PostgreSQL (a private cluster, a database per test).
import { memoryConformance } from "@opencomputer/testkit/memory-conformance";
import { usePrivateCluster } from "@opencomputer/testkit/postgres-suite";
import { createPostgresMemoryStore, createPostgresStore } from "../src/index.ts";

const cluster = usePrivateCluster();

memoryConformance("postgres", async () => {
  const database = await cluster().createDatabase();
  const store = await createPostgresStore({
    connectionString: cluster().connectionString(database),
  });
  return {
    memory: createPostgresMemoryStore(store),
    cleanup: async () => {
      await store.close();
      await cluster().dropDatabase(database);
    },
  };
});
