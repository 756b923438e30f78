// A private PostgreSQL cluster for one test file: started before its first test, stopped after
// its last (postgres-cluster.ts is the cluster itself, usable outside a test runner too).
import { afterAll, beforeAll } from "vitest";
import {
  type PrivateCluster,
  type PrivateClusterOptions,
  startPrivateCluster,
} from "./postgres-cluster.ts";

/** Registers the cluster's start and stop with the file's suite; call the result inside tests. */
export function usePrivateCluster(options: PrivateClusterOptions = {}): () => PrivateCluster {
  let cluster: PrivateCluster | undefined;
  beforeAll(async () => {
    cluster = await startPrivateCluster(options);
  }, 60_000);
  afterAll(async () => {
    await cluster?.stop();
  });
  return () => {
    if (!cluster) throw new Error("The private cluster is used before its beforeAll ran.");
    return cluster;
  };
}
