// The UsageStore conformance suite on PostgreSQL, a database per test on a private cluster.
import { usePrivateCluster } from "@opencomputer/testkit/postgres-suite";
import { usageStoreConformance } from "@opencomputer/testkit/usage-conformance";
import { createPostgresStore, createPostgresUsageStore } from "../src/index.ts";

const cluster = usePrivateCluster();

usageStoreConformance("postgres", async () => {
  const database = await cluster().createDatabase();
  const store = await createPostgresStore({
    connectionString: cluster().connectionString(database),
  });
  return {
    store,
    usage: createPostgresUsageStore(store),
    close: async () => {
      await store.close();
      await cluster().dropDatabase(database);
    },
  };
});
