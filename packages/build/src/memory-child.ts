// Runs in a child process (`node --import tsx memory-child.ts`), confined like the connections'
// child: imports each memory module and sends back the declarations of the `defineMemory`
// resources it exports, or why it failed with the line of the module that failed. Never imported
// by the build itself.

import { pathToFileURL } from "node:url";
import { OpenComputerError } from "@opencomputer/agent";
import { isMemory, memoryDeclaration } from "@opencomputer/agent/internal";
import { awaitKill } from "./child-end.ts";
import type { MemoryMessage } from "./memory.ts";

/** The line of `file` the error was thrown from (the first stack frame in it), or 1. */
function lineIn(error: unknown, file: string): { line: number; column: number } {
  const stack = error instanceof Error ? (error.stack ?? "") : "";
  for (const frame of stack.split("\n")) {
    const at = frame.lastIndexOf(file);
    if (at < 0) continue;
    const match = /^:(\d+):(\d+)/.exec(frame.slice(at + file.length));
    if (match) return { line: Number(match[1]), column: Number(match[2]) };
  }
  return { line: 1, column: 1 };
}

async function main(): Promise<void> {
  const files = JSON.parse(process.argv[2] ?? "[]") as string[];
  const results: MemoryMessage = [];
  for (const file of files) {
    try {
      const ns = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
      const seen = new Set<unknown>();
      const memory = [];
      for (const value of Object.values(ns)) {
        if (!isMemory(value) || seen.has(value)) continue;
        seen.add(value);
        memory.push(memoryDeclaration(value));
      }
      results.push({ file, memory });
    } catch (error) {
      const known = error instanceof OpenComputerError;
      results.push({
        file,
        error: {
          code: known ? error.code : "memory_module_load_failed",
          message: error instanceof Error ? error.message : String(error),
          ...(known && error.details.path !== undefined ? { path: error.details.path } : {}),
          ...lineIn(error, file),
        },
      });
    }
  }
  await new Promise<void>((resolve) => process.send?.(results, () => resolve()));
  awaitKill();
}

void main();
