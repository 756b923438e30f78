import { OpenComputerError } from "@opencomputer/agent";
import { buildCommand } from "./commands/build.ts";
import { keysCommand } from "./commands/keys.ts";
import { isRemoteSession, REMOTE_USAGE, remoteCommand } from "./commands/remote/index.ts";
import { secretsCommand } from "./commands/secrets.ts";
import { serveCommand } from "./commands/serve.ts";
import { sessionCommand } from "./commands/session.ts";

const USAGE = `Usage: opencomputer <command> [options]

Commands:
  session [--dir DIR] [--agent ID] [--json] "text"
      Build, then run one turn of an agent on the embedded store (.opencomputer/data.db
      in DIR) and print its events and the session result. Exit code 0 when the turn
      completed.
  build [--dir DIR] [--json]
      Check the agents statically and write their deployments (.opencomputer/deployments).
  doctor [--dir DIR] [--json]
      The same checks, writing nothing.
  dev [--dir DIR] [--port N]
      Build, serve the HTTP API (docs/api.md) with the runtime on the embedded store, and
      rebuild on changes. Prints the URL and an API key (or uses OPENCOMPUTER_API_KEY).
  server --store <file.db|postgres://...> [--dir DIR] [--port N]
      The same for production, without watching.
  keys create [--name N] | keys list [--json] | keys revoke <id>   [--dir DIR]
      API keys, stored hashed in .opencomputer/keys.json (a key is shown once, at create).
      dev and server accept these, plus OPENCOMPUTER_API_KEY(S) from the environment.

  secrets set NAME [--origin https://host ...] [--any-origin] | secrets list [--json]
          | secrets remove NAME   [--environment development|production] [--dir DIR]
      Secrets for connections, encrypted in .opencomputer/secrets.json (key: secret.key).
      set reads the value from stdin or a hidden prompt; no command ever prints a value.
      --origin (repeatable) binds the secret: the gateway sends it to those origins only.

${REMOTE_USAGE}
Environment:
  OPENCOMPUTER_MODEL   Replace every agent's model, e.g. script/demo (a scripted model
                       read from opencomputer/scripts/demo.json) to test an agent offline.
`;

/** Runs the CLI; returns the process exit code. */
export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case "session":
        if (isRemoteSession(rest[0])) return await remoteCommand("session", rest);
        return await sessionCommand(rest);
      case "sessions":
      case "results":
      case "approvals":
        return await remoteCommand(command, rest);
      case "dev":
        return await serveCommand(rest, "dev");
      case "server":
        return await serveCommand(rest, "server");
      case "keys":
        return await keysCommand(rest);
      case "secrets":
        return await secretsCommand(rest);
      case "build":
        return await buildCommand(rest, false);
      case "doctor":
        return await buildCommand(rest, true);
      case undefined:
      case "help":
      case "--help":
      case "-h":
        process.stdout.write(USAGE);
        return command === undefined ? 2 : 0;
      default:
        process.stderr.write(`Unknown command "${command}".\n\n${USAGE}`);
        return 2;
    }
  } catch (error) {
    if (error instanceof OpenComputerError) {
      process.stderr.write(`error ${error.code}: ${error.message}\n`);
      return error.code === "usage" ? 2 : 1;
    }
    throw error;
  }
}
