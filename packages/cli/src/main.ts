import { OpenComputerError } from "@opencomputer/agent";
import { buildCommand } from "./commands/build.ts";
import { deployCommand } from "./commands/deploy.ts";
import { allHelp, commandHelp, HELP, nearestCommand } from "./commands/help.ts";
import { initCommand } from "./commands/init.ts";
import { keysCommand } from "./commands/keys.ts";
import { linkCommand, loginCommand } from "./commands/login.ts";
import { logsCommand } from "./commands/logs.ts";
import { isRemoteSession, remoteCommand } from "./commands/remote/index.ts";
import { rollbackCommand } from "./commands/rollback.ts";
import { secretsCommand } from "./commands/secrets.ts";
import { serveCommand } from "./commands/serve.ts";
import { sessionCommand } from "./commands/session.ts";
import { testCommand } from "./commands/test.ts";
import { usageCommand } from "./commands/usage.ts";

type Run = (argv: string[]) => Promise<number>;

const COMMANDS: Record<string, Run> = {
  init: initCommand,
  session: (rest) =>
    isRemoteSession(rest[0]) ? remoteCommand("session", rest) : sessionCommand(rest),
  sessions: (rest) => remoteCommand("sessions", rest),
  logs: (rest) => logsCommand(rest),
  results: (rest) => remoteCommand("results", rest),
  approvals: (rest) => remoteCommand("approvals", rest),
  memory: (rest) => remoteCommand("memory", rest),
  webhooks: (rest) => remoteCommand("webhooks", rest),
  schedules: (rest) => remoteCommand("schedules", rest),
  events: (rest) => remoteCommand("events", rest),
  dev: (rest) => serveCommand(rest, "dev"),
  server: (rest) => serveCommand(rest, "server"),
  keys: keysCommand,
  secrets: (rest) => secretsCommand(rest),
  build: (rest) => buildCommand(rest, false),
  doctor: (rest) => buildCommand(rest, true),
  deploy: deployCommand,
  rollback: rollbackCommand,
  login: (rest) => loginCommand(rest),
  link: linkCommand,
  usage: usageCommand,
  test: testCommand,
};

/** Runs the CLI; returns the process exit code. */
export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === "help" || command === "--help" || command === "-h") {
    const topic = command === "help" ? rest[0] : undefined;
    process.stdout.write(topic && HELP[topic] ? commandHelp(topic) : allHelp());
    return command === undefined ? 2 : 0;
  }
  const run = COMMANDS[command];
  if (!run) {
    const near = nearestCommand(command);
    process.stderr.write(
      `Unknown command "${command}".${near ? ` Did you mean \`opencomputer ${near}\`?` : ""}\n\n${allHelp()}`,
    );
    return 2;
  }
  // `--help` anywhere before `--` asks for this command's help, never runs it.
  const end = rest.indexOf("--");
  const options = end === -1 ? rest : rest.slice(0, end);
  if (options.includes("--help") || options.includes("-h")) {
    process.stdout.write(commandHelp(command));
    return 0;
  }
  try {
    return await run(rest);
  } catch (error) {
    if (error instanceof OpenComputerError) {
      process.stderr.write(`error ${error.code}: ${error.message}\n`);
      if (error.code === "usage")
        process.stderr.write(`(opencomputer ${command} --help shows how)\n`);
      return error.code === "usage" ? 2 : 1;
    }
    throw error;
  }
}
