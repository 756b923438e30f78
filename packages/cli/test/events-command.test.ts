// `opencomputer events …` against `opencomputer dev` (a child process running the dispatcher):
// a subscription created by the CLI receives a real turn's outcome at a loopback receiver,
// signed with the secret the CLI printed once; then pause, rotate, replay and remove.
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { join, resolve } from "node:path";
import { verifyEventDelivery } from "@opencomputer/event-receiver";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { remoteCommand } from "../src/commands/remote/index.ts";
import { type DevServer, startDev } from "./dev-server.ts";

let dev: DevServer | undefined;
const saved = { url: process.env.OPENCOMPUTER_API_URL, key: process.env.OPENCOMPUTER_API_KEY };
const received: Array<{ path: string; headers: IncomingHttpHeaders; body: string }> = [];
const receiver = createServer((req, res) => {
  let body = "";
  req.on("data", (c) => {
    body += c;
  });
  req.on("end", () => {
    received.push({ path: req.url ?? "", headers: req.headers, body });
    res.writeHead(200).end();
  });
});
let receiverUrl = "";

beforeAll(async () => {
  await new Promise<void>((done) => receiver.listen(0, "127.0.0.1", done));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/oc/events`;
  dev = await startDev("events", join(resolve(import.meta.dirname), "fixtures/scheduled"));
  process.env.OPENCOMPUTER_API_URL = dev.url;
  process.env.OPENCOMPUTER_API_KEY = dev.key;
}, 30_000);

afterAll(async () => {
  dev?.stop();
  receiver.closeAllConnections();
  await new Promise((done) => receiver.close(done));
  for (const [name, value] of [
    ["OPENCOMPUTER_API_URL", saved.url],
    ["OPENCOMPUTER_API_KEY", saved.key],
  ] as const) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});

async function run(argv: string[]) {
  let stdout = "";
  let stderr = "";
  const spy = vi.spyOn(process.stdout, "write").mockImplementation((chunk) => {
    stdout += String(chunk);
    return true;
  });
  const errSpy = vi.spyOn(process.stderr, "write").mockImplementation((chunk) => {
    stderr += String(chunk);
    return true;
  });
  try {
    return { code: await remoteCommand("events", argv), stdout, stderr };
  } finally {
    spy.mockRestore();
    errSpy.mockRestore();
  }
}

async function api(method: string, path: string, body?: unknown) {
  const response = await fetch(dev!.url + path, {
    method,
    headers: { "x-api-key": dev!.key, "content-type": "application/json" },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  return (await response.json()) as unknown;
}

describe("events commands", () => {
  it("creates a subscription that receives a turn's outcome, then pauses, rotates, replays and removes it", async () => {
    const created = await run([
      "create",
      receiverUrl,
      "--environment",
      "development",
      "--events",
      "turn.completed,turn.failed",
    ]);
    expect(created.code).toBe(0);
    const secret = /Signing secret \(shown once\): (\S+)/.exec(created.stdout)![1]!;
    const id = /^(evs_\S+)/.exec(created.stdout)![1]!;
    const listed = JSON.parse((await run(["list", "--json"])).stdout);
    expect(listed.subscriptions).toEqual([expect.objectContaining({ id, status: "active" })]);
    expect(JSON.stringify(listed)).not.toContain(secret);

    const session = (await api("POST", "/sessions", { agentId: "hygiene@development" })) as {
      session: { id: string };
    };
    await api("POST", `/sessions/${session.session.id}/turns`, { input: "Go." });
    await expect
      .poll(async () => JSON.parse((await run(["deliveries", id, "--json"])).stdout).deliveries, {
        timeout: 20_000,
        interval: 200,
      })
      .toEqual([expect.objectContaining({ status: "delivered", sessionId: session.session.id })]);
    expect(received).toHaveLength(1);
    expect(
      await verifyEventDelivery({
        secret,
        headers: received[0]!.headers as Record<string, string>,
        method: "POST",
        path: received[0]!.path,
        body: received[0]!.body,
      }),
    ).toBe(true);

    expect((await run(["pause", id])).stdout).toContain("paused");
    expect((await run(["resume", id])).stdout).toContain("active");
    const rotated = await run(["rotate-secret", id]);
    const fresh = /shown once.*: (\S+)$/m.exec(rotated.stdout)![1]!;
    expect(fresh).not.toBe(secret);
    const deliveryId = JSON.parse((await run(["deliveries", id, "--json"])).stdout).deliveries[0]
      .id;
    expect((await run(["delivery", id, deliveryId])).stdout).toContain("delivered");
    const replayed = await run(["replay", id, "--delivery", deliveryId]);
    expect(replayed.stdout).toContain(`replay of ${deliveryId}`);
    await expect.poll(() => received.length, { timeout: 20_000, interval: 200 }).toBe(2);
    const signature = String(received[1]!.headers["x-oc-signature"]);
    expect(signature.split(",")).toHaveLength(2);

    const bad = await run(["create", "http://example.com/x", "--environment", "development"]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("invalid_event_subscription");
    expect((await run(["remove", id])).code).toBe(0);
    expect((await run(["get", id])).stderr).toContain("event_subscription_not_found");
  });
});
