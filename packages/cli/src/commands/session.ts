import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { OpenComputerError } from "@opencomputer/agent";
import { buildProject, createDeploymentAgents, formatErrors } from "@opencomputer/build";
import type { EventRecord } from "@opencomputer/runtime";
import { openEmbedded } from "../embedded.ts";
import { formatEvent } from "../format.ts";
import { chooseAgent } from "../project.ts";

/** `opencomputer session [--dir DIR] [--agent ID] [--json] "text"` */
export async function sessionCommand(argv: string[]): Promise<number> {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (error) {
    throw new OpenComputerError("usage", (error as Error).message);
  }
  const { values, positionals } = parsed;
  const text = positionals.join(" ").trim();
  if (!text)
    throw new OpenComputerError("usage", 'Give the message to send: opencomputer session "text"');
  const projectDir = resolve(values.dir ?? ".");
  const json = values.json ?? false;
  const agentId = chooseAgent(projectDir, values.agent);
  // Sessions run on deployments: build first (unchanged sources give the same deployment).
  const built = await buildProject(projectDir);
  if (built.errors.length > 0) {
    if (json)
      process.stdout.write(`${JSON.stringify({ type: "build.failed", errors: built.errors })}\n`);
    else process.stderr.write(`${formatErrors(built.errors)}\n`);
    return 1;
  }
  const embedded = openEmbedded(projectDir, createDeploymentAgents);
  const print = (e: EventRecord) =>
    process.stdout.write(`${json ? JSON.stringify(e) : formatEvent(e)}\n`);
  try {
    const { runtime } = embedded;
    await runtime.start();
    const { session } = await runtime.sessions.create({
      agentId: `${agentId}@development`,
      source: "api",
    });
    let cursor = 0;
    let reading = Promise.resolve();
    const drain = () => {
      reading = reading.then(async () => {
        for (const e of await runtime.sessions.events(session.id, cursor)) {
          cursor = e.seq;
          print(e);
        }
      });
      return reading;
    };
    const unsubscribe = runtime.sessions.subscribe(session.id, () => void drain());
    const { turnId } = await runtime.sessions.sendTurn(session.id, { source: "user", text });
    const turn = await runtime.sessions.waitForTurn(session.id, turnId, { timeoutMs: 30 * 60_000 });
    await drain();
    unsubscribe();
    const view = await runtime.sessions.get(session.id);
    if (json) {
      process.stdout.write(
        `${JSON.stringify({ type: "session.summary", session: view.id, turn: turn.status, result: view.result })}\n`,
      );
    } else {
      process.stdout.write(
        `\nsession ${view.id}: turn ${turn.status}${turn.error ? ` (${turn.error.code}: ${turn.error.message})` : ""}\n`,
      );
      process.stdout.write(`result: ${view.result ? JSON.stringify(view.result.data) : "none"}\n`);
    }
    return turn.status === "completed" ? 0 : 1;
  } finally {
    await embedded.close();
  }
}

function parse(argv: string[]) {
  return parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      dir: { type: "string" },
      agent: { type: "string" },
      json: { type: "boolean" },
    },
  });
}
