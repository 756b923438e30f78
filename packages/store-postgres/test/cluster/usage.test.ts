// Usage recorded by two `opencomputer server --store postgres://…` processes is rolled up as one:
// the first process runs a session alone and stops, the second runs another, and `GET /usage`
// on the second sums both (the rows were written by each process's own `oc_write` calls).

import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { type PrivateCluster, startPrivateCluster } from "@opencomputer/testkit/postgres-cluster";
import { afterAll, beforeAll, expect, it } from "vitest";
import {
  api,
  type ClusterProject,
  createSessionOn,
  kill,
  prepareProject,
  readRuns,
  type ServerProcess,
  sendTurn,
  startServer,
  until,
} from "./servers.ts";

let cluster: PrivateCluster;
let project: ClusterProject;
let url: string;
const servers: ServerProcess[] = [];

// The fixture's script with usage on each step: 3 steps, 600 input and 60 output tokens a turn.
const METERED = {
  steps: [
    {
      text: "Step one.",
      toolCalls: [{ name: "step", input: { n: 1 } }],
      usage: { inputTokens: 100, outputTokens: 10 },
    },
    {
      text: "Step two, and the report.",
      toolCalls: [
        { name: "step", input: { n: 2 } },
        { name: "report", input: { steps: 2 } },
      ],
      usage: { inputTokens: 200, outputTokens: 20 },
    },
    { text: "All done.", usage: { inputTokens: 300, outputTokens: 30 } },
  ],
};

beforeAll(async () => {
  cluster = await startPrivateCluster();
  url = cluster.connectionString(await cluster.createDatabase());
  project = prepareProject("usage");
  writeFileSync(join(project.dir, "opencomputer", "scripts", "work.json"), JSON.stringify(METERED));
}, 120_000);

afterAll(async () => {
  for (const s of servers) await kill(s);
  await cluster?.stop();
  project?.remove();
});

async function runOn(server: ServerProcess): Promise<string> {
  const sessionId = await createSessionOn(server);
  const turnId = await sendTurn(server, sessionId);
  await until(`turn ${turnId} on ${server.name}`, async () => {
    const view = await api<{ turns: Array<{ id: string; status: string }> }>(
      server,
      "GET",
      `/sessions/${sessionId}`,
    );
    const status = view.turns.find((t) => t.id === turnId)?.status;
    return status === "completed" ? true : undefined;
  });
  return sessionId;
}

interface Report {
  total: { steps: number; inputTokens: number; outputTokens: number; unpricedSteps: number };
  groups: Array<{ key: string; steps: number; inputTokens: number }>;
}

it("sums the steps both processes recorded", async () => {
  const a = await startServer("usage_a", project, url, { OC_STEP_MS: "0" });
  servers.push(a);
  const first = await runOn(a);
  await kill(a, "SIGTERM");
  const b = await startServer("usage_b", project, url, { OC_STEP_MS: "0" });
  servers.push(b);
  const second = await runOn(b);
  // Each session's tools ran in the process that was alive then.
  const pids = (sessionId: string) =>
    new Set(
      readRuns(project)
        .filter((r) => r.sessionId === sessionId)
        .map((r) => r.pid),
    );
  expect(pids(first)).toEqual(new Set([a.pid]));
  expect(pids(second)).toEqual(new Set([b.pid]));

  const report = await api<Report>(b, "GET", "/usage?groupBy=session");
  expect(report.total).toMatchObject({ steps: 6, inputTokens: 1200, outputTokens: 120 });
  expect(report.groups.map((g) => [g.key, g.steps, g.inputTokens])).toEqual(
    [
      [first, 3, 600],
      [second, 3, 600],
    ].sort(),
  );
}, 120_000);
