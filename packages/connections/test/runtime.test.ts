// End to end in one process: a scripted model calls tools whose code uses a connection; the
// gateway adds the secret; the secret must reach the origin and nothing else — not the session's
// events, not the runtime's log, not the model's prompts, not the tool results, not the store.

import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { LanguageModelV3 } from "@ai-sdk/provider";
import {
  bearer,
  defineConnection,
  defineTool,
  useModel,
  useSecret,
  useTool,
} from "@opencomputer/agent";
import { connectionDeclaration } from "@opencomputer/agent/internal";
import { createModelResolver, createScriptModel } from "@opencomputer/models";
import { createRuntime, createStaticAgents, type EventRecord } from "@opencomputer/runtime";
import { createSqliteStore } from "@opencomputer/store-sqlite";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createEgressGateway,
  envLocalSecrets,
  FileSecretStore,
  gatewayEgressSource,
  layeredSecrets,
} from "../src/index.ts";
import { type Origin, startOrigin, until } from "./origin.ts";

const SECRET = "sk_live_e2e_7d3a_never_log_me";
let origin: Origin;
let dir: string;
let store: ReturnType<typeof createSqliteStore>;
let gateway: ReturnType<typeof createEgressGateway>;
let runtime: ReturnType<typeof createRuntime>;
const prompts: string[] = [];
const logs: string[] = [];

beforeAll(async () => {
  origin = await startOrigin();
  dir = mkdtempSync(join(tmpdir(), "oc-egress-"));
  mkdirSync(join(dir, "opencomputer", "scripts"), { recursive: true });
  writeFileSync(
    join(dir, "opencomputer", "scripts", "billing.json"),
    JSON.stringify({
      steps: [
        { toolCalls: [{ name: "charge", input: { customerId: "c1", amount: 5 } }] },
        { toolCalls: [{ name: "refund", input: { chargeId: "ch_1" } }] },
        { text: "Charged, and the refund awaits approval." },
      ],
    }),
  );
  const billing = defineConnection({
    id: "billing",
    origin: origin.url,
    headers: { authorization: bearer(useSecret("BILLING_KEY")) },
    methods: ["POST"],
    pathPrefix: "/v1",
  });
  const charge = defineTool({
    name: "charge",
    description: "Charge a customer",
    input: {
      type: "object",
      properties: { customerId: { type: "string" }, amount: { type: "number" } },
    },
    async run({ input, sessionId, toolCallId }) {
      const response = await billing.fetch("/v1/charges", {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "idempotency-key": `${sessionId}:${toolCallId}`,
        },
        body: JSON.stringify(input),
      });
      return { status: response.status, body: await response.json() };
    },
  });
  const refund = defineTool({
    name: "refund",
    description: "Refund a charge",
    input: { type: "object", properties: { chargeId: { type: "string" } } },
    preview: ({ input }) => ({ title: `Refund ${String(input.chargeId)}` }),
    async apply({ input, decision }) {
      const response = await billing.fetch("/v1/refunds", {
        method: "POST",
        headers: { "idempotency-key": decision.id },
        body: JSON.stringify(input),
      });
      return { status: response.status };
    },
  });
  const agent = () => {
    useModel("recording/billing");
    useTool(charge);
    useTool(refund);
    return "Charge customers.";
  };

  // The real secret store, on disk, encrypted; plus .env.local for development.
  const secrets = new FileSecretStore({
    file: join(dir, ".opencomputer", "secrets.json"),
    keyFile: join(dir, ".opencomputer", "secret.key"),
  });
  await secrets.set("development", "BILLING_KEY", SECRET);
  store = createSqliteStore({ path: join(dir, "data.db") });
  gateway = createEgressGateway({
    devMode: true,
    secrets: layeredSecrets(secrets, envLocalSecrets(dir)),
    connections: () => [connectionDeclaration(billing)],
    events: (sessionId, event) => runtime.sessions.recordEgress(sessionId, event),
    log: { error: (message, fields) => void logs.push(JSON.stringify({ message, fields })) },
  });
  await gateway.listen();
  const recording = (name: string, context: Parameters<typeof createScriptModel>[1]) => {
    const model = createScriptModel(name, context);
    return new Proxy(model, {
      get(target, key) {
        if (key === "doGenerate" || key === "doStream") {
          return (options: { prompt: unknown }) => {
            prompts.push(JSON.stringify(options.prompt));
            return (target[key] as (o: unknown) => unknown).call(target, options);
          };
        }
        return Reflect.get(target, key);
      },
    }) as LanguageModelV3;
  };
  runtime = createRuntime({
    store,
    agents: createStaticAgents({ projectDir: dir, agents: { agent } }),
    models: createModelResolver({ providers: { recording } }),
    egress: gatewayEgressSource(gateway, async (id) => (await store.getSession(id))?.environment),
    log: {
      error: (message, fields) => void logs.push(JSON.stringify({ message, fields })),
      warn: (message, fields) => void logs.push(JSON.stringify({ message, fields })),
    },
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

async function allEvents(sessionId: string): Promise<EventRecord[]> {
  return store.readEvents(sessionId, 0, 500);
}

describe("connections in a session", () => {
  it("the secret reaches the origin and nothing else", async () => {
    const { session } = await runtime.sessions.create({
      agentId: "agent",
      environment: "development",
    });
    const { turnId } = await runtime.sessions.sendTurn(session.id, { text: "charge c1 5" });
    const turn = await runtime.sessions.waitForTurn(session.id, turnId, { timeoutMs: 20_000 });
    expect(turn.status).toBe("completed");

    // The tool's idempotency key is derived from the call, so a re-run sends the same key.
    const chargeCall = origin.received.find((r) => r.url === "/v1/charges")!;
    expect(chargeCall.headers.authorization).toBe(`Bearer ${SECRET}`);
    const events = await allEvents(session.id);
    const started = events.find((e) => e.type === "tool.started") as EventRecord & {
      data: { callId: string };
    };
    expect(chargeCall.headers["idempotency-key"]).toBe(`${session.id}:${started.data.callId}`);

    const egress = events.filter((e) => e.type.startsWith("egress."));
    expect(egress.map((e) => e.type)).toEqual(["egress.request", "egress.response"]);
    expect(egress.every((e) => e.turnId === turnId)).toBe(true);
    expect(egress[1]!.data).toMatchObject({
      connectionId: "billing",
      method: "POST",
      path: "/v1/charges",
      status: 201,
    });
    const completed = events.find((e) => e.type === "tool.completed")!;
    expect(completed.data).toMatchObject({ output: { status: 201 } });

    // The approval's apply calls out with decision.id as its idempotency key.
    const [approval] = await runtime.approvals.list(session.id);
    const decided = await runtime.approvals.decide(approval!.id, { decision: "approve" });
    expect(decided.status).toBe("applied");
    const refundCall = origin.received.find((r) => r.url === "/v1/refunds")!;
    expect(refundCall.headers["idempotency-key"]).toBe(decided.decision!.id);
    expect(refundCall.headers.authorization).toBe(`Bearer ${SECRET}`);
    await until(() => logs.length >= 0);
    const after = await allEvents(session.id);
    expect(after.filter((e) => e.type === "egress.response")).toHaveLength(2);

    const everywhere = [
      JSON.stringify(after),
      logs.join("\n"),
      prompts.join("\n"),
      JSON.stringify(await runtime.sessions.get(session.id)),
      JSON.stringify(await runtime.approvals.list(session.id)),
      readFileSync(join(dir, "data.db")).toString("latin1"),
      readFileSync(join(dir, ".opencomputer", "secrets.json"), "utf8"),
    ];
    expect(prompts.length).toBeGreaterThan(1);
    for (const text of everywhere) expect(text).not.toContain(SECRET);
  });

  it("production sessions do not get development secrets", async () => {
    const { session } = await runtime.sessions.create({
      agentId: "agent",
      environment: "production",
    });
    const sent = origin.received.length;
    const { turnId } = await runtime.sessions.sendTurn(session.id, { text: "charge c1 5" });
    await runtime.sessions.waitForTurn(session.id, turnId, { timeoutMs: 20_000 });
    const events = await allEvents(session.id);
    const failed = events.find((e) => e.type === "tool.failed") as EventRecord & {
      data: { message: string };
    };
    expect(failed.data.message).toContain("BILLING_KEY is not set for the production environment");
    expect(events.some((e) => e.type === "egress.failed")).toBe(true);
    expect(origin.received.length).toBe(sent);
  });
});
