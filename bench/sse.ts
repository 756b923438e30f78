// Live events over HTTP: a session whose tool reports progress is watched by `subscribers` SSE
// clients of one server (same process, real sockets). Two phases: a burst of `events` progress
// events as fast as the tool can commit them gives the events delivered per second across all
// subscribers (throughput); then `paced` events at `rate` per second give the latency from
// `reportProgress` (which returns once its event is committed) to each subscriber parsing it,
// without a backlog in the figure. Then GET /sessions/<id> requests per second from `clients`
// concurrent keep-alive clients.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defineTool, useModel, useTool } from "@opencomputer/agent";
import { createModelResolver, createScriptModel } from "@opencomputer/models";
import { createRuntime, createStaticAgents } from "@opencomputer/runtime";
import { createHandler, createStaticKeyAuth, serve } from "@opencomputer/server";
import { createSqliteStore } from "@opencomputer/store-sqlite";
import { percentile } from "./stats.ts";

export interface SseResult {
  subscribers: number;
  events: number;
  delivered: number;
  paced: number;
  rate: number;
  eventsPerSecond: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
  getClients: number;
  getRequests: number;
  getPerSecond: number;
  getP50Ms: number;
  getP99Ms: number;
}

const KEY = "bench-key";
const now = () => performance.timeOrigin + performance.now();

export async function benchSse(
  options: {
    subscribers?: number;
    events?: number;
    paced?: number;
    rate?: number;
    clients?: number;
    getSeconds?: number;
  } = {},
): Promise<SseResult> {
  const subscribers = options.subscribers ?? 100;
  const events = options.events ?? 1000;
  const paced = options.paced ?? 200;
  const rate = options.rate ?? 50;
  const clients = options.clients ?? 16;
  const getSeconds = options.getSeconds ?? 3;

  const dir = mkdtempSync(join(tmpdir(), "oc-bench-sse-"));
  mkdirSync(join(dir, "opencomputer", "scripts"), { recursive: true });
  writeFileSync(
    join(dir, "opencomputer", "scripts", "sse.json"),
    JSON.stringify({
      steps: [{ toolCalls: [{ name: "emit", input: {} }] }, { text: "done" }],
    }),
  );
  let release!: () => void;
  const go = new Promise<void>((resolve) => {
    release = resolve;
  });
  const emit = defineTool({
    name: "emit",
    description: "Reports progress many times",
    input: { type: "object", properties: {} },
    async run({ reportProgress }) {
      await go; // every subscriber is connected first
      for (let i = 0; i < events; i++) await reportProgress({ i, t: now() });
      for (let i = 0; i < paced; i++) {
        await new Promise((resolve) => setTimeout(resolve, 1000 / rate));
        await reportProgress({ i, t: now(), paced: true });
      }
      return { emitted: events + paced };
    },
  });
  const store = createSqliteStore({ path: join(dir, "data.db") });
  const runtime = createRuntime({
    store,
    agents: createStaticAgents({
      projectDir: dir,
      agents: {
        bench() {
          useModel("script/sse");
          useTool(emit);
          return "Emit.";
        },
      },
    }),
    models: createModelResolver({
      providers: { script: createScriptModel },
      override: "script/sse",
    }),
  });
  await runtime.start();
  const served = await serve(createHandler({ runtime, auth: createStaticKeyAuth([KEY]) }), {
    port: 0,
  });
  try {
    const { session } = await runtime.sessions.create({ agentId: "bench" });
    const latencies: number[] = [];
    let delivered = 0;
    let lastBurstAt = 0;
    const controller = new AbortController();
    const streams = await Promise.all(
      Array.from({ length: subscribers }, async () => {
        const res = await fetch(`${served.url}/sessions/${session.id}/events?after=0`, {
          headers: { "x-api-key": KEY, accept: "text/event-stream" },
          signal: controller.signal,
        });
        return res.body!.pipeThrough(new TextDecoderStream()).getReader();
      }),
    );
    const readers = streams.map(async (reader) => {
      let buffer = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        buffer += value;
        let end = buffer.indexOf("\n\n");
        while (end >= 0) {
          const frame = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          end = buffer.indexOf("\n\n");
          const data = frame.split("\n").find((l) => l.startsWith("data: "));
          if (!data) continue;
          const event = JSON.parse(data.slice(6)) as {
            type: string;
            data: { metadata?: { t: number; paced?: boolean } };
          };
          if (event.type === "tool.progress") {
            const m = event.data.metadata!;
            if (m.paced) latencies.push(now() - m.t);
            else {
              delivered++;
              lastBurstAt = performance.now();
            }
          }
          if (event.type === "turn.completed") return;
        }
      }
    });
    const { turnId } = await runtime.sessions.sendTurn(session.id, { text: "go" });
    const start = performance.now();
    release();
    await Promise.all(readers);
    const wallMs = lastBurstAt - start;
    controller.abort();
    await runtime.sessions.waitForTurn(session.id, turnId);
    if (delivered !== subscribers * events || latencies.length !== subscribers * paced)
      throw new Error(
        `delivered ${delivered + latencies.length} of ${subscribers * (events + paced)} events`,
      );
    const sorted = Float64Array.from(latencies).sort();

    // GET /sessions/<id>: `clients` loops for `getSeconds`.
    const getTimes: number[] = [];
    const until = performance.now() + getSeconds * 1000;
    const getStart = performance.now();
    await Promise.all(
      Array.from({ length: clients }, async () => {
        while (performance.now() < until) {
          const t = performance.now();
          const res = await fetch(`${served.url}/sessions/${session.id}`, {
            headers: { "x-api-key": KEY },
          });
          await res.arrayBuffer();
          if (res.status !== 200) throw new Error(`GET /sessions/<id>: ${res.status}`);
          getTimes.push(performance.now() - t);
        }
      }),
    );
    const getWall = performance.now() - getStart;
    const getSorted = Float64Array.from(getTimes).sort();
    return {
      subscribers,
      events,
      delivered,
      paced,
      rate,
      eventsPerSecond: delivered / (wallMs / 1000),
      latencyP50Ms: percentile(sorted, 50),
      latencyP99Ms: percentile(sorted, 99),
      getClients: clients,
      getRequests: getTimes.length,
      getPerSecond: getTimes.length / (getWall / 1000),
      getP50Ms: percentile(getSorted, 50),
      getP99Ms: percentile(getSorted, 99),
    };
  } finally {
    await served.close();
    await runtime.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

export function sseTable(r: SseResult): string {
  return [
    `SSE: ${r.subscribers} subscribers; burst of ${r.events} events = ${r.delivered} deliveries`,
    `  events delivered/s   ${r.eventsPerSecond.toFixed(0)}`,
    `  commit → delivery    p50 ${r.latencyP50Ms.toFixed(2)} ms   p99 ${r.latencyP99Ms.toFixed(2)} ms` +
      `   (${r.paced} events at ${r.rate}/s)`,
    `GET /sessions/<id>: ${r.getClients} keep-alive clients, ${r.getRequests} requests`,
    `  requests/s           ${r.getPerSecond.toFixed(0)}`,
    `  latency              p50 ${r.getP50Ms.toFixed(2)} ms   p99 ${r.getP99Ms.toFixed(2)} ms`,
  ].join("\n");
}
