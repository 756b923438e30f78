import { resolve } from "node:path";
import { OpenComputerError } from "@opencomputer/agent";
import { buildProject, createDeploymentAgents, formatErrors } from "@opencomputer/build";
import type { SessionEvent } from "@opencomputer/protocol";
import { parse } from "../args.ts";
import { ApiClient } from "../client.ts";
import { openEmbedded } from "../embedded.ts";
import type { OneShotBackend } from "../one-shot/backend.ts";
import { embeddedBackend } from "../one-shot/embedded-backend.ts";
import { httpBackend } from "../one-shot/http-backend.ts";
import { Keyboard } from "../one-shot/keyboard.ts";
import { runOneShot } from "../one-shot/run.ts";
import { chooseAgent } from "../project.ts";
import { printEvent } from "./remote/attach.ts";
import { refuseLikelySubcommand } from "./session-words.ts";

export const SESSION_ONE_SHOT_USAGE = `opencomputer session [--dir DIR] [--agent ID] [--json] [--verbose] [--interactive] "message"
  e.g.  opencomputer session "Where is my order A1?"
        opencomputer session -- list my orders     (after --, every word is the message)`;

/**
 * `opencomputer session [--dir DIR] [--agent ID] [--json] [--interactive|--no-interactive] "text"`
 * Against the server at OPENCOMPUTER_API_URL when it is set, otherwise on the embedded store
 * (building the project first). In a terminal, questions and approval cards are answered from
 * the keyboard; `--interactive` does the same with answers piped on stdin.
 */
export async function sessionCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, OPTIONS, SESSION_ONE_SHOT_USAGE);
  refuseLikelySubcommand(argv, positionals);
  const text = positionals.join(" ").trim();
  if (!text)
    throw new OpenComputerError("usage", 'Give the message to send: opencomputer session "text"');
  const json = values.json ?? false;
  const interactive = values["no-interactive"]
    ? false
    : (values.interactive ?? (process.stdin.isTTY === true && !json));
  const print = (e: SessionEvent) =>
    process.stdout.write(`${printEvent(e, json, values.verbose)}\n`);

  const opened = process.env.OPENCOMPUTER_API_URL
    ? await remote(values.agent)
    : await embedded(resolve(values.dir ?? "."), values.agent, json);
  if (typeof opened === "number") return opened;
  const { backend, agentRef } = opened;
  const keyboard = interactive ? new Keyboard() : undefined;
  try {
    const outcome = await runOneShot(backend, {
      agentRef,
      text,
      print,
      say: (line) => process.stderr.write(`${line}\n`),
      flush: () => new Promise((done) => process.stdout.write("", () => done())),
      ...(keyboard ? { keyboard } : {}),
    });
    if (json) {
      process.stdout.write(
        `${JSON.stringify({ type: "session.summary", session: outcome.sessionId, turn: outcome.status, result: outcome.result, question: outcome.question, pendingApprovals: outcome.pending })}\n`,
      );
    } else {
      process.stdout.write(
        `\nsession ${outcome.sessionId}: turn ${outcome.status}${outcome.error ? ` (${outcome.error.code}: ${outcome.error.message})` : ""}\n`,
      );
      process.stdout.write(
        `result: ${outcome.result ? JSON.stringify((outcome.result as { data: unknown }).data) : "none"}\n`,
      );
      if (outcome.question)
        process.stdout.write(`waiting for an answer: ${outcome.question.text}\n`);
      if (outcome.pending.length > 0)
        process.stdout.write(`waiting for approval: ${outcome.pending.join(", ")}\n`);
    }
    return outcome.status === "completed" ? 0 : 1;
  } finally {
    keyboard?.close();
    await backend.close();
  }
}

/** A running server: the agent is the one named, or the server's only agent. */
async function remote(agent: string | undefined) {
  const api = ApiClient.fromEnv();
  let agentId = agent;
  if (!agentId) {
    const { agents } = await api.get<{ agents: { id: string }[] }>("/agents");
    if (agents.length !== 1) {
      throw new OpenComputerError(
        "usage",
        agents.length === 0
          ? `The server at ${api.url} has no agents`
          : `The server has several agents (${agents.map((a) => a.id).join(", ")}); choose one with --agent`,
      );
    }
    agentId = agents[0]!.id;
  }
  return { backend: httpBackend(api) as OneShotBackend, agentRef: `${agentId}@development` };
}

/** The embedded store: build first (unchanged sources give the same deployment). */
async function embedded(projectDir: string, agent: string | undefined, json: boolean) {
  const agentId = chooseAgent(projectDir, agent);
  const built = await buildProject(projectDir);
  if (built.errors.length > 0) {
    if (json)
      process.stdout.write(`${JSON.stringify({ type: "build.failed", errors: built.errors })}\n`);
    else process.stderr.write(`${formatErrors(built.errors)}\n`);
    return 1;
  }
  const opened = openEmbedded(projectDir, createDeploymentAgents);
  await opened.runtime.start();
  return {
    backend: embeddedBackend(opened.runtime, () => opened.close()),
    agentRef: `${agentId}@development`,
  };
}

const OPTIONS = {
  dir: { type: "string" },
  agent: { type: "string" },
  json: { type: "boolean" },
  interactive: { type: "boolean" },
  "no-interactive": { type: "boolean" },
  verbose: { type: "boolean" },
} as const;
