// Event subscriptions over HTTP, under the platform's project paths: a real runtime runs a turn,
// the dispatcher posts its outcome to a loopback receiver, and the delivery routes show it.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { EventDispatcher, EventSubscriptions } from "@opencomputer/event-delivery";
import { parseEventDelivery, verifyEventDelivery } from "@opencomputer/event-receiver";
import { createModelResolver, createScriptModel } from "@opencomputer/models";
import { createRuntime, createStaticAgents, type Runtime } from "@opencomputer/runtime";
import {
  createSqliteDeliveryStore,
  createSqliteStore,
  type SqliteStore,
} from "@opencomputer/store-sqlite";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHandler, createStaticKeyAuth, type Served, serve } from "../src/index.ts";
import type { Loose } from "./helpers.ts";

let dir: string;
let store: SqliteStore;
let runtime: Runtime;
let served: Served;
let dispatcher: EventDispatcher;
const received: Array<{ path: string; headers: Record<string, string>; body: string }> = [];
let receiver: ReturnType<typeof createServer>;
let receiverUrl: string;
const KEY = "k-events";
const BASE = "/api/managed-agents/projects/default/event-subscriptions";

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "oc-event-subs-http-"));
  mkdirSync(join(dir, "opencomputer", "scripts"), { recursive: true });
  writeFileSync(
    join(dir, "opencomputer", "scripts", "test.json"),
    JSON.stringify({ steps: [{ text: "All flags removed." }] }),
  );
  store = createSqliteStore({ path: join(dir, "data.db") });
  runtime = createRuntime({
    store,
    agents: createStaticAgents({ projectDir: dir, agents: { triage: () => "Triage." } }),
    models: createModelResolver({
      providers: { script: createScriptModel },
      override: "script/test",
    }),
    log: { error: () => {}, warn: () => {} },
  });
  await runtime.start();
  const deliveries = createSqliteDeliveryStore(store);
  dispatcher = new EventDispatcher({ store: deliveries, holder: "rt_http" });
  const handler = createHandler({
    runtime,
    auth: createStaticKeyAuth([KEY]),
    eventSubscriptions: new EventSubscriptions({ store: deliveries, allowLoopbackHttp: true }),
  });
  served = await serve(handler, { port: 0 });
  receiver = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => {
      body += c;
    });
    req.on("end", () => {
      received.push({ path: req.url ?? "", headers: req.headers as Record<string, string>, body });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks/oc`;
});

afterAll(async () => {
  await dispatcher?.stop();
  await served?.close();
  await runtime?.close();
  await store?.close();
  receiver?.closeAllConnections();
  await new Promise((resolve) => receiver?.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

async function call(method: string, path: string, body?: unknown) {
  const response = await fetch(served.url + path, {
    method,
    headers: { "x-api-key": KEY, "content-type": "application/json" },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await response.text();
  return { status: response.status, body: (text ? JSON.parse(text) : null) as Loose };
}

async function runTurn(): Promise<{ sessionId: string; turnId: string }> {
  const created = await call("POST", "/sessions", { agentId: "triage" });
  const sessionId = created.body.session.id;
  const turn = await call("POST", `/sessions/${sessionId}/turns`, { input: "Go." });
  await expect
    .poll(async () => (await call("GET", `/sessions/${sessionId}`)).body.turns[0].status)
    .toBe("completed");
  return { sessionId, turnId: turn.body.turnId };
}

describe("event subscription routes", () => {
  it("creates a subscription whose deliveries a real turn produces, signed and listed", async () => {
    const created = await call("POST", BASE, {
      environment: "development",
      events: ["turn.completed"],
      destination: { type: "https", url: receiverUrl },
    });
    expect(created.status).toBe(201);
    const { subscription, signingSecret } = created.body;
    expect(subscription).toMatchObject({ status: "active", agentId: null, projectId: "default" });
    expect((await call("GET", BASE)).body.subscriptions).toEqual([subscription]);
    expect((await call("GET", `${BASE}/${subscription.id}`)).body.subscription).toEqual(
      subscription,
    );

    const turn = await runTurn();
    await dispatcher.runOnce();
    expect(received).toHaveLength(1);
    const [got] = received;
    expect(
      await verifyEventDelivery({
        secret: signingSecret,
        headers: got!.headers,
        method: "POST",
        path: got!.path,
        body: got!.body,
      }),
    ).toBe(true);
    const body = parseEventDelivery(got!.body)!;
    expect(body).toMatchObject({
      sessionId: turn.sessionId,
      turnId: turn.turnId,
      agentId: "triage",
      type: "turn.completed",
      data: { status: "completed", result: { text: "All flags removed.", truncated: false } },
    });

    const list = await call("GET", `${BASE}/${subscription.id}/deliveries?status=delivered`);
    expect(list.body.deliveries).toHaveLength(1);
    const record = list.body.deliveries[0];
    expect(record).toMatchObject({ id: body.deliveryId, status: "delivered", responseStatus: 204 });
    expect(
      (await call("GET", `${BASE}/${subscription.id}/deliveries/${record.id}`)).body.delivery,
    ).toEqual(record);

    const replay = await call("POST", `${BASE}/${subscription.id}/replay`, {
      deliveryIds: [record.id],
    });
    expect(replay.status).toBe(202);
    expect(replay.body.deliveries[0]).toMatchObject({ replayOf: record.id, status: "pending" });

    const paused = await call("POST", `${BASE}/${subscription.id}/pause`);
    expect(paused.body.subscription.status).toBe("paused");
    expect((await call("POST", `${BASE}/${subscription.id}/resume`)).body.subscription.status).toBe(
      "active",
    );
    const rotated = await call("POST", `${BASE}/${subscription.id}/rotate-secret`);
    expect(rotated.body.signingSecret).not.toBe(signingSecret);
    expect(rotated.body.subscription.secretRotatedAt).toEqual(expect.any(String));

    expect((await call("DELETE", `${BASE}/${subscription.id}`)).status).toBe(204);
    const gone = await call("GET", `${BASE}/${subscription.id}/deliveries`);
    expect(gone.status).toBe(404);
    expect(gone.body.error.code).toBe("event_subscription_not_found");
    expect((await call("GET", `${BASE}/${subscription.id}/deliveries/${record.id}`)).status).toBe(
      404,
    );
  });

  it("answers bad input with a typed error naming the field", async () => {
    const cases: Array<[unknown, number, string, string]> = [
      [
        {
          environment: "production",
          events: ["turn.completed"],
          destination: { type: "https", url: "http://example.com/x" },
        },
        400,
        "invalid_event_subscription",
        "destination.url",
      ],
      [
        {
          environment: "production",
          events: ["session.ended"],
          destination: { type: "https", url: receiverUrl },
        },
        400,
        "invalid_event_subscription",
        "events[0]",
      ],
      [
        {
          environment: "production",
          events: ["turn.failed"],
          destination: { type: "https", url: receiverUrl },
          secret: "x",
        },
        400,
        "invalid_input",
        "secret",
      ],
    ];
    for (const [body, status, code, path] of cases) {
      const answer = await call("POST", BASE, body);
      expect(answer.status).toBe(status);
      expect(answer.body.error).toMatchObject({ code, path });
    }
    const created = await call("POST", BASE, {
      environment: "production",
      events: ["turn.failed"],
      destination: { type: "https", url: receiverUrl },
    });
    const id = created.body.subscription.id;
    const badQuery = await call("GET", `${BASE}/${id}/deliveries?status=lost`);
    expect(badQuery.body.error).toMatchObject({ code: "invalid_query", path: "status" });
    const badReplay = await call("POST", `${BASE}/${id}/replay`, { since: "soon" });
    expect(badReplay.body.error).toMatchObject({ code: "invalid_input", path: "since" });
  });
});
