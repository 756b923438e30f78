// `opencomputer dev` end to end with agent code in (sandboxed) worker processes: the billing
// example's tool calls its connection through the egress gateway, the secret arrives at the
// origin, and no process running agent code has it in its environment. A tool added to the copy
// calls the same loopback origin with a plain `fetch()`: refused by default (a sandboxed worker
// reaches only the gateway), allowed with OPENCOMPUTER_WORKER_NETWORK=host.

import { cpSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { join, resolve } from "node:path";
import { bwrapAvailable } from "@opencomputer/workers";
import { afterEach, describe, expect, it } from "vitest";
import { type DevServer, startDev } from "./dev-server.ts";

const repo = resolve(import.meta.dirname, "../../..");
const SECRET = "sk_worker_5c1d_keep_it_secret";
let dev: DevServer | undefined;
const source = join(repo, "test-output", `worker-egress-src-${process.pid}`);
afterEach(() => {
  dev?.stop();
  dev = undefined;
  rmSync(source, { recursive: true, force: true });
});

/** The billing example plus `peek`, a tool that fetches a URL directly, and a script using both. */
function billingWithPeek(originUrl: string): void {
  mkdirSync(source, { recursive: true });
  const project = join(source, "opencomputer");
  cpSync(join(repo, "examples/billing/opencomputer"), project, { recursive: true });
  writeFileSync(join(project, ".env.local"), `BILLING_API_KEY=${SECRET}\n`);
  // The build loads connection modules with a minimal environment, so the example's
  // BILLING_API_ORIGIN cannot reach it: the copy names the mock origin itself.
  const connection = join(project, "connections", "billing-api.ts");
  writeFileSync(
    connection,
    readFileSync(connection, "utf8").replace(
      'process.env.BILLING_API_ORIGIN ?? "https://billing.example.com"',
      JSON.stringify(originUrl),
    ),
  );
  const agentDir = join(project, "agents", "billing");
  writeFileSync(
    join(agentDir, "tools", "peek.ts"),
    `import { defineTool } from "@opencomputer/agent";
export const peek = defineTool({
  name: "peek",
  description: "Fetches a URL without a connection",
  input: { type: "object", properties: { url: { type: "string" } }, required: ["url"] },
  async run({ input }) {
    return { status: (await fetch(String(input.url))).status };
  },
});
`,
  );
  const agent = readFileSync(join(agentDir, "agent.ts"), "utf8")
    .replace(
      'import { refund } from "./tools/refund";',
      'import { refund } from "./tools/refund";\nimport { peek } from "./tools/peek";',
    )
    .replace("useTool(refund);", "useTool(refund);\n  useTool(peek);");
  writeFileSync(join(agentDir, "agent.ts"), agent);
  const charge = { name: "charge", input: { customerId: "cus_1", amountCents: 500 } };
  const peek = { name: "peek", input: { url: `${originUrl}/direct` } };
  writeFileSync(
    join(project, "scripts", "demo.json"),
    JSON.stringify({ steps: [{ toolCalls: [charge, peek] }, { text: "Done." }] }),
  );
}

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
  it.each([
    ["by default", undefined],
    ["with OPENCOMPUTER_WORKER_NETWORK=host", "host"],
  ] as const)(
    "a tool's connection.fetch reaches the origin with the secret, the worker never holds it; a plain fetch %s",
    async (_name, network) => {
      const received: Array<{ url: string; headers: IncomingHttpHeaders }> = [];
      const origin = createServer((req, res) => {
        received.push({ url: req.url ?? "", headers: req.headers });
        req.resume();
        res.writeHead(201, { "content-type": "application/json" }).end('{"id":"ch_1"}');
      });
      await new Promise<void>((r) => origin.listen(0, "127.0.0.1", () => r()));
      const originUrl = `http://127.0.0.1:${(origin.address() as AddressInfo).port}`;
      if (network) process.env.OPENCOMPUTER_WORKER_NETWORK = network;
      try {
        billingWithPeek(originUrl);
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
        await call("POST", `/sessions/${sessionId}/turns`, {
          input: { text: "Charge cus_1 5.00" },
        });
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
        expect(
          events.map((e) => e.type),
          JSON.stringify(events),
        ).toContain("turn.completed");
        expect(
          events.find((e) => e.type === "egress.response")?.data,
          JSON.stringify(events),
        ).toMatchObject({
          status: 201,
        });
        expect(received.find((r) => r.url === "/v1/charges")!.headers.authorization).toBe(
          `Bearer ${SECRET}`,
        );
        const peeked = (type: string) =>
          events.filter((e) => e.type === type && e.data.tool === "peek").map((e) => e.data);
        if (network === "host" || !bwrapAvailable()) {
          // The host's network (or a plain worker, which has no namespace to keep it out).
          expect(peeked("tool.completed")[0]).toMatchObject({ output: { status: 201 } });
          expect(received.some((r) => r.url === "/direct")).toBe(true);
        } else {
          expect(peeked("tool.failed")[0]).toMatchObject({ message: "fetch failed" });
          expect(received.some((r) => r.url === "/direct")).toBe(false);
        }
        expect(JSON.stringify(events)).not.toContain(SECRET);
        // The workers: started by the dev server, running @opencomputer/workers' child script.
        const workers = tree(child.pid!).filter((p) => p.cmdline.includes("workers/src/child.ts"));
        expect(workers.length).toBeGreaterThan(0);
        // With bubblewrap here, they run in its sandbox (the project is reachable by its uid).
        if (bwrapAvailable()) {
          expect(tree(child.pid!).some((p) => p.cmdline.startsWith("/usr/bin/bwrap"))).toBe(true);
        }
        for (const worker of workers) {
          expect(readFileSync(`/proc/${worker.pid}/environ`, "utf8")).not.toContain(SECRET);
        }
      } finally {
        delete process.env.OPENCOMPUTER_WORKER_NETWORK;
        origin.close();
      }
    },
  );
});
