import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AgentFunction, Memory } from "@opencomputer/agent";
import { createModelResolver, createScriptModel, type ScriptStep } from "@opencomputer/models";
import { createRuntime, createStaticAgents } from "@opencomputer/runtime";
import {
  createSqliteMemoryStore,
  createSqliteStore,
  createSqliteUsageStore,
} from "@opencomputer/store-sqlite";
import { createHandler, createStaticKeyAuth, type HandlerOptions, serve } from "../src/index.ts";

export const KEY = "test-key-1";

/** A JSON reply read loosely: tests index into it freely and check it with expect. */
// biome-ignore lint/suspicious/noExplicitAny: one loose type for asserting on API replies
export type Loose = any;

export interface TestServer {
  url: string;
  runtime: ReturnType<typeof createRuntime>;
  errors: unknown[];
  /** fetch against the server with the API key (override headers to drop or change it). */
  call(
    method: string,
    path: string,
    init?: { body?: unknown; headers?: Record<string, string> },
  ): Promise<Response>;
  close(): Promise<void>;
}

/** A runtime on a real SQLite file in a temp dir (static agents, scripted model) served over HTTP. */
export async function startServer(options: {
  agents: Record<string, AgentFunction>;
  steps?: ScriptStep[];
  handler?: Partial<HandlerOptions>;
  /** Memory each agent declares; the runtime gets a memory store on its file. */
  memory?: Record<string, readonly Memory[]>;
}): Promise<TestServer> {
  const dir = mkdtempSync(join(tmpdir(), "oc-server-"));
  mkdirSync(join(dir, "opencomputer", "scripts"), { recursive: true });
  writeFileSync(
    join(dir, "opencomputer", "scripts", "test.json"),
    JSON.stringify({ steps: options.steps ?? [] }),
  );
  const store = createSqliteStore({ path: join(dir, "data.db") });
  const runtime = createRuntime({
    store,
    agents: createStaticAgents({
      projectDir: dir,
      agents: options.agents,
      ...(options.memory ? { memory: options.memory } : {}),
    }),
    ...(options.memory ? { memory: createSqliteMemoryStore(store) } : {}),
    models: createModelResolver({
      providers: { script: createScriptModel },
      override: "script/test",
    }),
    log: { error: () => {}, warn: () => {} },
    cancelGraceMs: 200,
  });
  await runtime.start();
  const errors: unknown[] = [];
  const handler = createHandler({
    runtime,
    auth: createStaticKeyAuth([KEY, "test-key-2"]),
    onError: (e) => errors.push(e),
    usage: createSqliteUsageStore(store),
    ...options.handler,
  });
  const served = await serve(handler, { port: 0 });
  return {
    url: served.url,
    runtime,
    errors,
    call(method, path, init = {}) {
      const body =
        init.body === undefined
          ? undefined
          : typeof init.body === "string" || init.body instanceof Uint8Array
            ? init.body
            : JSON.stringify(init.body);
      return fetch(served.url + path, {
        method,
        headers: { "x-api-key": KEY, "content-type": "application/json", ...init.headers },
        ...(body !== undefined ? { body } : {}),
      });
    },
    async close() {
      await served.close();
      await runtime.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Resolves when `predicate` holds, polling; fails after `timeoutMs`. */
export async function until(predicate: () => boolean | Promise<boolean>, timeoutMs = 5000) {
  const end = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > end) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 10));
  }
}
