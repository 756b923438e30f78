// The TriggerStore conformance suite on PostgreSQL, a database per test on a private cluster.
import { usePrivateCluster } from "@opencomputer/testkit/postgres-suite";
import { triggerStoreConformance } from "@opencomputer/testkit/trigger-conformance";
import { createPostgresStore, createPostgresTriggerStore } from "../src/index.ts";

const cluster = usePrivateCluster();

triggerStoreConformance("postgres", async () => {
  const database = await cluster().createDatabase();
  const store = await createPostgresStore({
    connectionString: cluster().connectionString(database),
  });
  return {
    triggers: createPostgresTriggerStore(store),
    close: async () => {
      await store.close();
      await cluster().dropDatabase(database);
    },
  };
});
