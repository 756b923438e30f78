// `opencomputer dev` end to end: agent code runs in worker processes, the gateway in the server.
// The secret (from opencomputer/.env.local) reaches the loopback origin and no event.

import { writeFileSync } from "node:fs";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DevServer, startDev } from "./dev-server.ts";

const repo = resolve(import.meta.dirname, "../../..");
const SECRET = "sk_dev_91ab_only_for_the_origin";
const received: IncomingHttpHeaders[] = [];
let origin: Server;
let dev: DevServer;

beforeAll(async () => {
  origin = createServer((req, res) => {
    received.push(req.headers);
    req.resume();
    res.writeHead(201, { "content-type": "application/json" }).end('{"id":"ch_9"}');
  });
  await new Promise<void>((r) => origin.listen(0, "127.0.0.1", () => r()));
  // The build (in the dev server) records the connection's origin from this variable, which
  // project code sees only because OPENCOMPUTER_AGENT_ENV names it.
  process.env.BILLING_API_ORIGIN = `http://127.0.0.1:${(origin.address() as AddressInfo).port}`;
  process.env.OPENCOMPUTER_AGENT_ENV = "BILLING_API_ORIGIN";
  dev = await startDev("egress-dev", join(repo, "examples/billing"));
  const project = join(repo, "test-output", `egress-dev-${process.pid}`);
  writeFileSync(join(project, "opencomputer", ".env.local"), `BILLING_API_KEY=${SECRET}\n`);
}, 300_000);

afterAll(async () => {
  dev?.stop();
  delete process.env.BILLING_API_ORIGIN;
  delete process.env.OPENCOMPUTER_AGENT_ENV;
  await new Promise<void>((r) => origin.close(() => r()));
});

async function api(path: string, body?: unknown) {
  const response = await fetch(`${dev.url}${path}`, {
    method: body === undefined ? "GET" : "POST",
    headers: { "x-api-key": dev.key, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return (await response.json()) as Record<string, unknown>;
}

describe("opencomputer dev with a connection", { timeout: 300_000 }, () => {
  it("calls the origin through the gateway; events show the request, never the secret", async () => {
    const created = (await api("/sessions", { agentId: "billing@development" })) as {
      session: { id: string };
    };
    const id = created.session.id;
    await api(`/sessions/${id}/turns`, { input: { text: "Charge cus_1 5.00" } });
    let events: Array<{ type: string; data: Record<string, unknown> }> = [];
    for (let i = 0; i < 1200; i++) {
      events = ((await api(`/sessions/${id}/events?after=0`)) as { events: typeof events }).events;
      if (events.some((e) => /^turn\.(completed|failed|cancelled)$/.test(e.type))) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const types = events.map((e) => e.type);
    expect(types, JSON.stringify(events)).toContain("turn.completed");
    expect(events.find((e) => e.type === "egress.response")?.data).toMatchObject({
      connectionId: "billing_api",
      status: 201,
    });
    expect(received.at(-1)!.authorization).toBe(`Bearer ${SECRET}`);
    expect(JSON.stringify(events)).not.toContain(SECRET);
  });
});
