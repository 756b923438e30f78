// End to end: a tool leaks its connection into a continuation that runs after the call has
// ended (as a timer would). The runtime revokes the call's token when the call settles, so the
// late request is refused with egress_token_expired, the origin never sees it, and nothing is
// recorded under the settled turn. The same holds for an approval's preview and apply.

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defineConnection, defineTool, useModel, useTool } from "@opencomputer/agent";
import { connectionDeclaration } from "@opencomputer/agent/internal";
import { createModelResolver, createScriptModel } from "@opencomputer/models";
import { createRuntime, createStaticAgents } from "@opencomputer/runtime";
import { createSqliteStore } from "@opencomputer/store-sqlite";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEgressGateway, gatewayEgressSource } from "../src/index.ts";
import { type Origin, startOrigin } from "./origin.ts";

let origin: Origin;
let dir: string;
let store: ReturnType<typeof createSqliteStore>;
let gateway: ReturnType<typeof createEgressGateway>;
let runtime: ReturnType<typeof createRuntime>;

/** Continuations the tools left behind; each resolves to what its late request got. */
const leaked: Array<{ release: () => void; outcome: Promise<string> }> = [];

/** Runs `request` after the test calls release(), in the async context it was made in. */
function leak(request: () => Promise<Response>): void {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  const outcome = gate.then(request).then(
    (response) => `status ${response.status}`,
    (error: { code?: string }) => String(error.code),
  );
  leaked.push({ release, outcome });
}

beforeAll(async () => {
  origin = await startOrigin();
  dir = mkdtempSync(join(tmpdir(), "oc-token-life-"));
  mkdirSync(join(dir, "opencomputer", "scripts"), { recursive: true });
  writeFileSync(
    join(dir, "opencomputer", "scripts", "leaky.json"),
    JSON.stringify({
      steps: [
        { toolCalls: [{ name: "leaky", input: {} }] },
        { toolCalls: [{ name: "leaky_write", input: {} }] },
        { text: "done" },
      ],
    }),
  );
  const api = defineConnection({ id: "api", origin: origin.url });
  const leaky = defineTool({
    name: "leaky",
    description: "Calls out once, and leaves a call for later",
    input: { type: "object", properties: {} },
    async run() {
      const response = await api.fetch("/v1/during");
      leak(() => api.fetch("/v1/late-run"));
      return { status: response.status };
    },
  });
  const leakyWrite = defineTool({
    name: "leaky_write",
    description: "An approval whose preview and apply leave calls for later",
    input: { type: "object", properties: {} },
    preview() {
      leak(() => api.fetch("/v1/late-preview"));
      return { title: "Write" };
    },
    async apply() {
      leak(() => api.fetch("/v1/late-apply"));
      return { ok: true };
    },
  });
  const agent = () => {
    useModel("script/leaky");
    useTool(leaky);
    useTool(leakyWrite);
    return "Leak.";
  };
  store = createSqliteStore({ path: join(dir, "data.db") });
  gateway = createEgressGateway({
    devMode: true,
    secrets: { resolve: async () => undefined },
    connections: () => [connectionDeclaration(api)],
    events: (sessionId, event) => runtime.sessions.recordEgress(sessionId, event),
  });
  await gateway.listen();
  runtime = createRuntime({
    store,
    agents: createStaticAgents({ projectDir: dir, agents: { agent } }),
    models: createModelResolver({ providers: { script: createScriptModel } }),
    egress: gatewayEgressSource(gateway, async () => "development"),
  });
  await runtime.start();
});

afterAll(async () => {
  await runtime?.close();
  await gateway?.close();
  await store?.close();
  await origin?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("a token dies with its call", () => {
  it("refuses run, preview and apply requests made after the call settled", async () => {
    const { session } = await runtime.sessions.create({
      agentId: "agent",
      environment: "development",
    });
    const { turnId } = await runtime.sessions.sendTurn(session.id, { text: "go" });
    const turn = await runtime.sessions.waitForTurn(session.id, turnId, { timeoutMs: 20_000 });
    expect(turn.status).toBe("completed");
    const [approval] = await runtime.approvals.list(session.id);
    expect((await runtime.approvals.decide(approval!.id, { decision: "approve" })).status).toBe(
      "applied",
    );
    expect(leaked).toHaveLength(3);
    const before = await store.readEvents(session.id, 0, 500);

    for (const late of leaked) late.release();
    const outcomes = await Promise.all(leaked.map((late) => late.outcome));
    expect(outcomes).toEqual([
      "egress_token_expired",
      "egress_token_expired",
      "egress_token_expired",
    ]);
    expect(origin.received.map((r) => r.url)).toEqual(["/v1/during"]);
    const after = await store.readEvents(session.id, 0, 500);
    expect(after.length).toBe(before.length);
    const egress = after.filter((e) => e.type.startsWith("egress."));
    expect(egress.map((e) => [e.type, e.turnId, (e.data as { path: string }).path])).toEqual([
      ["egress.request", turnId, "/v1/during"],
      ["egress.response", turnId, "/v1/during"],
    ]);
    // Every token the runtime asked for was revoked when its call settled.
    expect(gateway.liveTokens).toBe(0);
  });
});
