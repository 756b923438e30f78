// `opencomputer dev` end to end with agent code in (sandboxed) worker processes: the billing
// example's tool calls its connection through the egress gateway, the secret arrives at the
// origin, and no process running agent code has it in its environment.

import { cpSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { join, resolve } from "node:path";
import { bwrapAvailable } from "@opencomputer/runtime";
import { afterAll, describe, expect, it } from "vitest";
import { type DevServer, startDev } from "./dev-server.ts";

const repo = resolve(import.meta.dirname, "../../..");
const SECRET = "sk_worker_5c1d_keep_it_secret";
let dev: DevServer | undefined;
const source = join(repo, "test-output", `worker-egress-src-${process.pid}`);
afterAll(() => {
  dev?.stop();
  rmSync(source, { recursive: true, force: true });
});

/** Every process below `pid`, with its command line. */
function tree(pid: number): Array<{ pid: number; cmdline: string }> {
  const out: Array<{ pid: number; cmdline: string }> = [];
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    const children = readFileSync(`/proc/${pid}/task/${task}/children`, "utf8").trim();
    for (const child of children ? children.split(" ").map(Number) : []) {
      const cmdline = readFileSync(`/proc/${child}/cmdline`, "utf8").replaceAll("\0", " ");
      out.push({ pid: child, cmdline }, ...tree(child));
    }
  }
  return out;
}

describe("opencomputer dev with workers", { timeout: 180_000 }, () => {
  it("a tool's connection.fetch reaches the origin with the secret; the worker never holds it", async () => {
    const received: Array<{ url: string; headers: IncomingHttpHeaders }> = [];
    const origin = createServer((req, res) => {
      received.push({ url: req.url ?? "", headers: req.headers });
      req.resume();
      res.writeHead(201, { "content-type": "application/json" }).end('{"id":"ch_1"}');
    });
    await new Promise<void>((r) => origin.listen(0, "127.0.0.1", () => r()));
    const previous = process.env.BILLING_API_ORIGIN;
    process.env.BILLING_API_ORIGIN = `http://127.0.0.1:${(origin.address() as AddressInfo).port}`;
    try {
      mkdirSync(source, { recursive: true });
      cpSync(join(repo, "examples/billing/opencomputer"), join(source, "opencomputer"), {
        recursive: true,
      });
      writeFileSync(join(source, "opencomputer", ".env.local"), `BILLING_API_KEY=${SECRET}\n`);
      dev = await startDev("worker-egress", source);
      const { url, key, child } = dev;
      const call = async (method: string, path: string, body?: unknown) =>
        (await fetch(`${url}${path}`, {
          method,
          headers: { "x-api-key": key, "content-type": "application/json" },
          ...(body ? { body: JSON.stringify(body) } : {}),
        })) as Response;
      const created = (await (
        await call("POST", "/sessions", { agentId: "billing@development" })
      ).json()) as { session: { id: string } };
      const sessionId = created.session.id;
      await call("POST", `/sessions/${sessionId}/turns`, { input: { text: "Charge cus_1 5.00" } });
      let events: Array<{ type: string; data: Record<string, unknown> }> = [];
      for (
        let i = 0;
        i < 600 &&
        !events.some(
          (e) =>
            e.type.startsWith("turn.") && e.type !== "turn.queued" && e.type !== "turn.started",
        );
        i++
      ) {
        await new Promise((r) => setTimeout(r, 100));
        events = (
          (await (await call("GET", `/sessions/${sessionId}/events?after=0`)).json()) as {
            events: typeof events;
          }
        ).events;
      }
      expect(events.map((e) => e.type)).toContain("turn.completed");
      expect(events.find((e) => e.type === "egress.response")?.data).toMatchObject({
        status: 201,
      });
      expect(received[0]!.headers.authorization).toBe(`Bearer ${SECRET}`);
      expect(JSON.stringify(events)).not.toContain(SECRET);
      // The workers: started by the dev server, running the runtime's child script.
      const workers = tree(child.pid!).filter((p) => p.cmdline.includes("worker/child.ts"));
      expect(workers.length).toBeGreaterThan(0);
      // With bubblewrap here, they run in its sandbox (the project is reachable by its uid).
      if (bwrapAvailable()) {
        expect(tree(child.pid!).some((p) => p.cmdline.startsWith("/usr/bin/bwrap"))).toBe(true);
      }
      for (const worker of workers) {
        expect(readFileSync(`/proc/${worker.pid}/environ`, "utf8")).not.toContain(SECRET);
      }
    } finally {
      if (previous === undefined) delete process.env.BILLING_API_ORIGIN;
      else process.env.BILLING_API_ORIGIN = previous;
      origin.close();
    }
  });
});
