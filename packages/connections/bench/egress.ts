// The cost of the egress gateway: a GET to a loopback origin straight with fetch, against the
// same request through connection.fetch → gateway (token check, secret header) → origin.
// Both measured in one run, interleaved, so the ratio holds on a busy machine.
//
//   node --import tsx packages/connections/bench/egress.ts [--runs 2000]

import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { parseArgs } from "node:util";
import { bearer, defineConnection, useSecret } from "@opencomputer/agent";
import { connectionDeclaration, runWithEgress } from "@opencomputer/agent/internal";
import { createEgressGateway } from "../src/index.ts";

const { values } = parseArgs({ options: { runs: { type: "string" } } });
const runs = Number(values.runs ?? 2000);

const origin = createServer((_req, res) =>
  res.writeHead(200, { "content-type": "application/json" }).end('{"ok":true}'),
);
await new Promise<void>((r) => origin.listen(0, "127.0.0.1", () => r()));
const url = `http://127.0.0.1:${(origin.address() as AddressInfo).port}`;
const api = defineConnection({
  id: "api",
  origin: url,
  headers: { authorization: bearer(useSecret("KEY")) },
});
const gateway = createEgressGateway({
  devMode: true,
  secrets: { resolve: async () => "sk_bench" },
  connections: () => [connectionDeclaration(api)],
});
await gateway.listen();

async function direct(): Promise<void> {
  const r = await fetch(`${url}/v1/x`, { headers: { authorization: "Bearer sk_bench" } });
  await r.text();
}
async function viaGateway(): Promise<void> {
  const ctx = gateway.issue({ sessionId: "ses_bench", agentId: "a", environment: "development" });
  const r = await runWithEgress(ctx, () => api.fetch("/v1/x"));
  await r.text();
}

const times = { direct: [] as number[], gateway: [] as number[] };
for (let i = 0; i < Math.min(200, runs); i++) {
  await direct();
  await viaGateway();
}
for (let i = 0; i < runs; i++) {
  let t = performance.now();
  await direct();
  times.direct.push(performance.now() - t);
  t = performance.now();
  await viaGateway();
  times.gateway.push(performance.now() - t);
}
const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) * p)]!;
const row = (name: string, xs: number[]) =>
  `${name.padEnd(22)} p50 ${(pct(xs, 0.5) * 1000).toFixed(0).padStart(6)} µs   p99 ${(pct(xs, 0.99) * 1000).toFixed(0).padStart(6)} µs`;
console.log(`egress gateway, ${runs} runs each (loopback origin, GET, small JSON body)`);
console.log(row("fetch → origin", times.direct));
console.log(row("connection.fetch → gw", times.gateway));
console.log(`ratio p50 ${(pct(times.gateway, 0.5) / pct(times.direct, 0.5)).toFixed(2)}×`);
await gateway.close();
origin.close();
