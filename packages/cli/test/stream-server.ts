import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defineTool, useModel, useTool } from "@opencomputer/agent";
import { createModelResolver, createScriptModel } from "@opencomputer/models";
import { createRuntime, createStaticAgents } from "@opencomputer/runtime";
import { createHandler, createStaticKeyAuth, serve } from "@opencomputer/server";
import { createSqliteStore } from "@opencomputer/store-sqlite";

export const KEY = "cli-stream-test-key";

/** Counts to `to`, one progress event every `everyMs`: a turn whose events arrive over time. */
const count = defineTool({
  name: "count",
  description: "Count slowly",
  input: {
    type: "object",
    properties: { to: { type: "number" }, everyMs: { type: "number" } },
    required: ["to", "everyMs"],
  },
  run: async ({ input, reportProgress }) => {
    for (let i = 1; i <= Number(input.to); i++) {
      await new Promise((r) => setTimeout(r, Number(input.everyMs)));
      await reportProgress({ n: i });
    }
    return { counted: input.to };
  },
});

function counter() {
  useModel("script/counter");
  useTool(count);
  return "Count when asked.";
}

export interface StreamServer {
  url: string;
  close(): Promise<void>;
}

/**
 * The real server in this process: the runtime on a SQLite file in a temp dir, the HTTP API on
 * a free port, and the `counter` agent on a scripted model (one `count` call, then a reply).
 */
export async function startStreamServer(countTo = 8, everyMs = 40): Promise<StreamServer> {
  const dir = mkdtempSync(join(tmpdir(), "oc-cli-stream-"));
  mkdirSync(join(dir, "opencomputer", "scripts"), { recursive: true });
  writeFileSync(
    join(dir, "opencomputer", "scripts", "counter.json"),
    JSON.stringify({
      steps: [
        { toolCalls: [{ name: "count", input: { to: countTo, everyMs } }] },
        { text: "Counted." },
      ],
    }),
  );
  const store = createSqliteStore({ path: join(dir, "data.db") });
  const runtime = createRuntime({
    store,
    agents: createStaticAgents({ projectDir: dir, agents: { counter } }),
    models: createModelResolver({ providers: { script: createScriptModel } }),
    log: { error: () => {}, warn: () => {} },
  });
  await runtime.start();
  const handler = createHandler({ runtime, auth: createStaticKeyAuth([KEY]) });
  const served = await serve(handler, { port: 0 });
  return {
    url: served.url,
    async close() {
      await served.close();
      await runtime.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
