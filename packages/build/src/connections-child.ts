// Runs in a child process (`node --import tsx connections-child.ts`), confined like load-child.ts
// for tools: imports each connection module and sends back the declarations of the connections it
// exports, or why it failed. Never imported by the build itself.

import { pathToFileURL } from "node:url";
import { OpenComputerError } from "@opencomputer/agent";
import { connectionDeclaration, isConnection } from "@opencomputer/agent/internal";
import { awaitKill } from "./child-end.ts";
import type { ConnectionsMessage } from "./connections.ts";

async function main(): Promise<void> {
  const files = JSON.parse(process.argv[2] ?? "[]") as string[];
  const results: ConnectionsMessage = [];
  for (const file of files) {
    try {
      const ns = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
      const seen = new Set<unknown>();
      const connections = [];
      for (const value of Object.values(ns)) {
        if (!isConnection(value) || seen.has(value)) continue;
        seen.add(value);
        connections.push(connectionDeclaration(value));
      }
      results.push({ file, connections });
    } catch (error) {
      const known = error instanceof OpenComputerError;
      results.push({
        file,
        error: {
          code: known ? error.code : "connection_module_load_failed",
          message: error instanceof Error ? error.message : String(error),
          ...(known && error.details.path !== undefined ? { path: error.details.path } : {}),
        },
      });
    }
  }
  await new Promise<void>((resolve) => process.send?.(results, () => resolve()));
  awaitKill();
}

void main();
