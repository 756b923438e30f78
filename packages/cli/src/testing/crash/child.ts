// One runtime process of `opencomputer test --crash`:
//
//   node --import tsx child.ts      then one line on stdin: {projectDir, dbPath, egressLog, spec, kill?}
//
// It loads its modules and prints `loaded` before it reads its orders, so the parent can warm
// the next runtime up while the current one runs (as the runtime's own crash tests do).
// Opens the embedded runtime on the run's store with the scenario's model, plays the scenario
// (again, from the start: every step carries an idempotency key, so a step a killed predecessor
// already took is not taken twice), and prints one JSON line with what it counted. With a kill
// point it SIGKILLs itself there instead. Each outbound request is appended to the egress log,
// synchronously, before the origin is called.

import { appendFileSync } from "node:fs";
import { createDeploymentAgents } from "@opencomputer/build";
import { openEmbedded } from "../../embedded.ts";
import { cliExecution, startExecution } from "../../execution.ts";
import { driveScenario } from "../drive.ts";
import type { ScenarioSpec } from "../scenario.ts";
import { egressKiller, type KillPoint, killingStore } from "./kill-points.ts";

interface ChildArgs {
  projectDir: string;
  dbPath: string;
  egressLog: string;
  spec: ScenarioSpec;
  kill?: KillPoint;
}

process.stdout.write("loaded\n");
const args = await readOrders();
const counter = { commits: 0, egress: 0 };
const onEgress = egressKiller(args.kill, counter);

const opened = openEmbedded(args.projectDir, createDeploymentAgents, {
  dbPath: args.dbPath,
  model: args.spec.model,
  wrapStore: (store) => killingStore(store, args.kill, counter),
  observeEgress: (request) => {
    const { claims } = request;
    appendFileSync(
      args.egressLog,
      `${JSON.stringify({
        execution: claims.id,
        sessionId: claims.sessionId,
        callId: claims.callId,
        phase: claims.phase,
        decisionId: claims.decisionId,
        connectionId: request.connectionId,
        method: request.method,
        path: request.path,
        idempotencyKey: request.idempotencyKey ?? null,
      })}\n`,
    );
    onEgress();
  },
  // A killed runtime's session is taken over within a fraction of a second.
  timing: { leaseMs: 300, recoveryIntervalMs: 40 },
  // Agent code in worker processes (sandboxed where bubblewrap is), which die with this one.
  execution: (agents) => startExecution(cliExecution(args.projectDir), agents),
});
await opened.runtime.start();
const seen = await driveScenario(opened.runtime, args.spec);
await opened.close();
process.stdout.write(
  `${JSON.stringify({ done: true, sessionId: seen.sessionId, status: seen.status, commits: counter.commits, egress: counter.egress })}\n`,
);
process.exit(0);

function readOrders(): Promise<ChildArgs> {
  return new Promise((resolve) => {
    let buffered = "";
    process.stdin.setEncoding("utf8");
    process.stdin.on("data", (chunk: string) => {
      buffered += chunk;
      const end = buffered.indexOf("\n");
      // A child the parent lost must not outlive it.
      if (end >= 0) {
        setTimeout(() => process.exit(3), 120_000).unref();
        resolve(JSON.parse(buffered.slice(0, end)) as ChildArgs);
      }
    });
    // The parent went away before giving orders.
    process.stdin.on("end", () => process.exit(4));
  });
}
