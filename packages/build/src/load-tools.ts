// Loads the project's modules in one child process, with a time limit, to learn what only
// running them can tell: input schemas built at load, descriptions, and tool kinds. One child
// per build keeps the cost to a single Node start however many modules there are.

import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { BuildError } from "./errors.ts";
import type { LoadedTool, LoadFailure, LoadMessage, LoadRequest } from "./load-protocol.ts";
import { isInside, type Project, relativePath } from "./project.ts";

export const DEFAULT_LOAD_TIMEOUT_MS = 10_000;
/**
 * Starting Node and the TypeScript loader is not the user's code and can be slow on a busy
 * machine; it gets its own, longer allowance so the time limit measures the modules.
 */
const START_ALLOWANCE_MS = 30_000;

export interface LoadResult {
  /** Tools by absolute module path, for each module that loaded. */
  loaded: Map<string, LoadedTool[]>;
  /** Modules that failed, with the error to report (absent when an import of theirs failed). */
  failed: Map<string, BuildError | undefined>;
  /** A timeout or a crash of the loader process: the modules after it were not loaded. */
  fatal?: BuildError;
}

const CHILD_SCRIPT = fileURLToPath(new URL("./load-child.ts", import.meta.url));
const TSX_LOADER = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;
const STDERR_KEEP = 4096;

export function loadModules(
  project: Project,
  modules: readonly string[],
  timeoutMs: number = DEFAULT_LOAD_TIMEOUT_MS,
): Promise<LoadResult> {
  const result: LoadResult = { loaded: new Map(), failed: new Map() };
  if (modules.length === 0) return Promise.resolve(result);
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ["--import", TSX_LOADER, CHILD_SCRIPT], {
      cwd: project.root,
      stdio: ["ignore", "pipe", "pipe", "ipc"],
    });
    let pending: string | undefined;
    let done = false;
    let stderr = "";
    // Whatever the modules print is theirs; drain it so a chatty module cannot block on a pipe.
    child.stdout?.resume();
    child.stderr?.on("data", (chunk: Buffer) => {
      stderr = (stderr + chunk.toString("utf8")).slice(-STDERR_KEEP);
    });

    const finish = (fatal?: BuildError) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      if (fatal) result.fatal = fatal;
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      resolve(result);
    };
    const at = (module: string | undefined) => ({
      file: module ? relativePath(project, module) : relativePath(project, modules[0]!),
      line: 1,
      column: 1,
    });

    // The limit applies to each module in turn (the clock restarts whenever one settles), so a
    // project of many modules is not refused for being large, only for one that does not finish.
    let timer: NodeJS.Timeout | undefined;
    const arm = (ms: number) => {
      clearTimeout(timer);
      timer = setTimeout(onTimeout, ms);
    };
    const onTimeout = () => {
      const rel = pending ? relativePath(project, pending) : undefined;
      finish({
        code: "tool_module_load_timeout",
        message: rel
          ? `Loading ${rel} did not finish within ${formatMs(timeoutMs)}: a module must not wait at load (a top-level await that never settles, a loop); do that work in run()`
          : `The loader process did not start within ${formatMs(Math.max(timeoutMs, START_ALLOWANCE_MS))}`,
        ...at(pending),
      });
    };
    arm(Math.max(timeoutMs, START_ALLOWANCE_MS));

    child.on("message", (message: LoadMessage) => {
      if (message.type !== "ready") arm(timeoutMs);
      switch (message.type) {
        case "ready":
          child.send({ root: project.root, modules: [...modules] } satisfies LoadRequest);
          arm(timeoutMs);
          break;
        case "start":
          pending = message.module;
          break;
        case "loaded":
          result.loaded.set(message.module, message.tools);
          pending = undefined;
          break;
        case "failed": {
          const module = message.module || pending;
          if (!module) break;
          result.failed.set(module, message.error && failureError(project, module, message.error));
          pending = undefined;
          break;
        }
        case "done":
          finish();
          break;
      }
    });
    child.on("error", (error) => {
      finish({
        code: "tool_module_load_failed",
        message: `Could not start the loader process: ${error.message}`,
        ...at(undefined),
      });
    });
    child.on("exit", (code, signal) => {
      if (done) return;
      const how = signal ? `signal ${signal}` : `exit code ${code}`;
      const tail = stderr.trim().split("\n").slice(-3).join(" | ");
      const rel = pending && relativePath(project, pending);
      // Node ends a process whose only work left is an await that can never settle.
      const message =
        rel && code === 0
          ? `Loading ${rel} never finished: it waits at load for something that never happens (a top-level await that never settles); do that work in run()`
          : rel
            ? `Loading ${rel} ended the loader process (${how})${tail ? `: ${tail}` : ""}`
            : `The loader process ended (${how})${tail ? `: ${tail}` : ""}`;
      finish({ code: "tool_module_load_failed", message, ...at(pending) });
    });
  });
}

function failureError(project: Project, module: string, failure: LoadFailure): BuildError {
  const rel = relativePath(project, module);
  const where =
    failure.location && isInside(project.root, failure.location.file)
      ? {
          file: relativePath(project, failure.location.file),
          line: failure.location.line,
          column: failure.location.column,
        }
      : { file: rel, line: 1, column: 1 };
  if (failure.code) {
    // defineTool refused the definition: its code and message already name the tool and field.
    return { code: failure.code, message: failure.message, ...where };
  }
  return {
    code: "tool_module_load_failed",
    message: `Loading ${rel} threw ${failure.name}: ${failure.message}`,
    ...where,
  };
}

function formatMs(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}
