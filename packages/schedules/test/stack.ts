// A runtime on a SQLite file (static agents, scripted model) and the store's trigger tables: what
// a scheduler runs against in these tests. Time is the test's clock, moved by hand.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defineSchedule, type ScheduleDefinition, useInput } from "@opencomputer/agent";
import { createModelResolver, createScriptModel } from "@opencomputer/models";
import {
  createRuntime,
  createStaticAgents,
  type Runtime,
  type TriggerStore,
} from "@opencomputer/runtime";
import { createSqliteStore, createSqliteTriggerStore } from "@opencomputer/store-sqlite";
import type { DeployedSchedule } from "../src/index.ts";

export interface Stack {
  runtime: Runtime;
  triggers: TriggerStore;
  /** What the agent saw as `useInput()` on each render. */
  seen: unknown[];
  close(): Promise<void>;
}

export async function startStack(): Promise<Stack> {
  const dir = mkdtempSync(join(tmpdir(), "oc-schedules-"));
  mkdirSync(join(dir, "opencomputer", "scripts"), { recursive: true });
  writeFileSync(
    join(dir, "opencomputer", "scripts", "test.json"),
    JSON.stringify({ steps: [{ text: "done" }] }),
  );
  const store = createSqliteStore({ path: join(dir, "data.db") });
  const seen: unknown[] = [];
  const runtime = createRuntime({
    store,
    agents: createStaticAgents({
      projectDir: dir,
      agents: {
        hygiene: () => {
          seen.push(useInput());
          return "Review stale feature flags.";
        },
      },
    }),
    models: createModelResolver({
      providers: { script: createScriptModel },
      override: "script/test",
    }),
    log: { error: () => {}, warn: () => {} },
  });
  await runtime.start();
  return {
    runtime,
    triggers: createSqliteTriggerStore(store),
    seen,
    async close() {
      await runtime.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export function deployed(def: Partial<ScheduleDefinition> = {}): DeployedSchedule {
  return {
    agentId: "hygiene",
    deploymentId: "static",
    schedule: defineSchedule({ id: "every-minute", cron: "* * * * *", ...def }),
  };
}

/** A test clock: `at` reads it, `set` moves it. */
export function testClock(start: string) {
  let now = Date.parse(start);
  return {
    now: () => now,
    set(iso: string) {
      now = Date.parse(iso);
    },
  };
}
