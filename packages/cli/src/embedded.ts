import { mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import type { AgentResolver } from "@opencomputer/runtime";
import {
  createModelResolver,
  createRuntime,
  createScriptModel,
  defaultProviders,
} from "@opencomputer/runtime";
import { createSqliteStore } from "@opencomputer/store-sqlite";

/** The runtime on the embedded default: SQLite at `<dir>/.opencomputer/data.db`. */
export function openEmbedded(dir: string, agents: (projectDir: string) => AgentResolver) {
  const projectDir = resolve(dir);
  const dataDir = join(projectDir, ".opencomputer");
  mkdirSync(dataDir, { recursive: true });
  const store = createSqliteStore({ path: join(dataDir, "data.db") });
  const runtime = createRuntime({
    store,
    agents: agents(projectDir),
    // Real providers read their keys from the environment when a model is first used.
    models: createModelResolver({
      providers: { ...defaultProviders(), script: createScriptModel },
    }),
  });
  return {
    projectDir,
    runtime,
    async close() {
      await runtime.close();
      await store.close();
    },
  };
}
