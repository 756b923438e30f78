import { OpenComputerError } from "@opencomputer/agent";
import { ApiClient } from "../../client.ts";
import { approvalsRemote } from "./approvals.ts";
import { eventsRemote } from "./events.ts";
import { memoryRemote } from "./memory.ts";
import { resultsRemote } from "./results.ts";
import { schedulesRemote } from "./schedules.ts";
import { isRemoteSession, sessionRemote } from "./session.ts";
import { sessionsRemote } from "./tail.ts";
import { webhooksRemote } from "./webhooks.ts";

export { isRemoteSession };

/**
 * Runs `opencomputer <group> ...` against a running server; returns the exit code:
 * 0 ok, 1 an API error (printed as `error <code>: <message>`), 2 a usage error.
 */
export async function remoteCommand(group: string, argv: string[]): Promise<number> {
  // The client is made lazily so argument errors are reported before a missing environment.
  let api: ApiClient | undefined;
  const client = () => {
    api ??= ApiClient.fromEnv();
    return api;
  };
  try {
    switch (group) {
      case "session":
        return await sessionRemote(client, argv);
      case "sessions":
        return await sessionsRemote(client, argv);
      case "results":
        return await resultsRemote(client, argv);
      case "approvals":
        return await approvalsRemote(client, argv);
      case "memory":
        return await memoryRemote(client, argv);
      case "webhooks":
        return await webhooksRemote(client, argv);
      case "schedules":
        return await schedulesRemote(client, argv);
      case "events":
        return await eventsRemote(client, argv);
      default:
        throw new OpenComputerError("usage", `Unknown command "${group}"`);
    }
  } catch (error) {
    if (error instanceof OpenComputerError) {
      process.stderr.write(`error ${error.code}: ${error.message}\n`);
      return error.code === "usage" ? 2 : 1;
    }
    throw error;
  }
}
