// Loads the project's modules in one child process, with a time limit, to learn what only
// running them can tell: input schemas built at load, descriptions, and tool kinds. One child
// per build keeps the cost to a single Node start however many modules there are, and it is
// started first, so that start overlaps the static phase. The child runs project code, so it is
// confined as the isolation says (load-process.ts) and killed, with all it started, at the end.

import type { ChildProcess } from "node:child_process";
import { siblingModule } from "@opencomputer/workers";
import type { BuildError } from "./errors.ts";
import type { BuildIsolation } from "./isolation.ts";
import { type LoadProcess, startLoadProcess } from "./load-process.ts";
import type {
  LoadedMcpServer,
  LoadedTool,
  LoadFailure,
  LoadMessage,
  LoadRequest,
} from "./load-protocol.ts";
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
  /** The MCP servers each module defined while it loaded. */
  mcpServers: Map<string, LoadedMcpServer[]>;
  /** Modules that failed, with the error to report (absent when an import of theirs failed). */
  failed: Map<string, BuildError | undefined>;
  /** A timeout or a crash of the loader process: the modules after it were not loaded. */
  fatal?: BuildError;
}

export interface Loader {
  /** Imports the modules in this order (dependencies first); call once. */
  load(modules: readonly string[]): Promise<LoadResult>;
  /** Stops the process when the build ends without loading (it threw). */
  cancel(): void;
}

const CHILD_SCRIPT = siblingModule(import.meta.url, "load-child");
const STDERR_KEEP = 4096;

/** Starts the loader process now; `load` sends it the modules once they are known. */
export function startLoader(
  project: Project,
  isolation: BuildIsolation,
  timeoutMs = DEFAULT_LOAD_TIMEOUT_MS,
): Loader {
  const started = startLoadProcess(
    project,
    isolation,
    CHILD_SCRIPT,
    [],
    ["ignore", "pipe", "pipe", "ipc"],
  );
  const session = new LoadSession(project, started, timeoutMs);
  return { load: (modules) => session.load(modules), cancel: () => void session.load([]) };
}

class LoadSession {
  private readonly result: LoadResult = {
    loaded: new Map(),
    mcpServers: new Map(),
    failed: new Map(),
  };
  private modules: readonly string[] | undefined;
  private ready = false;
  private sent = false;
  private pending: string | undefined;
  private done = false;
  private stderr = "";
  private timer: NodeJS.Timeout | undefined;
  private resolve: ((result: LoadResult) => void) | undefined;
  private fatal: BuildError | undefined;
  private readonly child: ChildProcess;

  constructor(
    private readonly project: Project,
    private readonly loader: LoadProcess,
    private readonly timeoutMs: number,
  ) {
    const child = loader.child;
    this.child = child;
    // Whatever the modules print is theirs; drain it so a chatty module cannot block on a pipe.
    child.stdout?.resume();
    child.stderr?.on("data", (chunk: Buffer) => {
      this.stderr = (this.stderr + chunk.toString("utf8")).slice(-STDERR_KEEP);
    });
    child.on("message", (message: LoadMessage) => this.onMessage(message));
    child.on("error", (error) =>
      this.finish({
        code: "tool_module_load_failed",
        message: `Could not start the loader process: ${error.message}`,
        ...this.at(undefined),
      }),
    );
    child.on("exit", (code, signal) => this.onExit(code, signal));
    this.arm(Math.max(timeoutMs, START_ALLOWANCE_MS));
  }

  load(modules: readonly string[]): Promise<LoadResult> {
    this.modules = modules;
    if (modules.length === 0) this.finish();
    return new Promise((resolve) => {
      this.resolve = resolve;
      if (this.done) this.settle();
      else this.send();
    });
  }

  private send(): void {
    if (!this.ready || this.sent || !this.modules || this.done) return;
    this.sent = true;
    this.child.send({ root: this.project.root, modules: [...this.modules] } satisfies LoadRequest);
    this.arm(this.timeoutMs);
  }

  private onMessage(message: LoadMessage): void {
    if (message.type === "ready") {
      this.ready = true;
      this.send();
      return;
    }
    // The limit applies to each module in turn (the clock restarts whenever one settles), so a
    // project of many modules is not refused for being large, only for one that does not finish.
    this.arm(this.timeoutMs);
    switch (message.type) {
      case "start":
        this.pending = message.module;
        break;
      case "loaded":
        this.result.loaded.set(message.module, message.tools);
        if (message.mcpServers?.length) {
          this.result.mcpServers.set(message.module, message.mcpServers);
        }
        this.pending = undefined;
        break;
      case "failed": {
        const module = message.module || this.pending;
        if (module) {
          const error = message.error && failureError(this.project, module, message.error);
          this.result.failed.set(module, error);
        }
        this.pending = undefined;
        break;
      }
      case "done":
        this.finish();
        break;
    }
  }

  private onExit(code: number | null, signal: NodeJS.Signals | null): void {
    if (this.done) return;
    const how = signal ? `signal ${signal}` : `exit code ${code}`;
    const tail = this.stderr.trim().split("\n").slice(-3).join(" | ");
    const rel = this.pending && relativePath(this.project, this.pending);
    // Node ends a process whose only work left is an await that can never settle.
    const message =
      rel && code === 0
        ? `Loading ${rel} never finished: it waits at load for something that never happens (a top-level await that never settles); do that work in run()`
        : rel
          ? `Loading ${rel} ended the loader process (${how})${tail ? `: ${tail}` : ""}`
          : `The loader process ended (${how})${tail ? `: ${tail}` : ""}`;
    this.finish({ code: "tool_module_load_failed", message, ...this.at(this.pending) });
  }

  private onTimeout(): void {
    const rel = this.pending ? relativePath(this.project, this.pending) : undefined;
    this.finish({
      code: "tool_module_load_timeout",
      message: rel
        ? `Loading ${rel} did not finish within ${formatMs(this.timeoutMs)}: a module must not wait at load (a top-level await that never settles, a loop); do that work in run()`
        : `The loader process did not start within ${formatMs(Math.max(this.timeoutMs, START_ALLOWANCE_MS))}`,
      ...this.at(this.pending),
    });
  }

  private arm(ms: number): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.onTimeout(), ms);
  }

  private at(module: string | undefined): { file: string; line: number; column: number } {
    const file = module ?? this.modules?.[0];
    return { file: file ? relativePath(this.project, file) : "opencomputer", line: 1, column: 1 };
  }

  private finish(fatal?: BuildError): void {
    if (this.done) return;
    this.done = true;
    clearTimeout(this.timer);
    this.fatal = fatal;
    // Also after the loader exited: what its modules started may still run.
    this.loader.stop();
    this.settle();
  }

  private settle(): void {
    if (!this.resolve) return;
    // A loader that was given nothing to load may end any way it likes.
    if (this.fatal && this.modules && this.modules.length > 0) this.result.fatal = this.fatal;
    this.resolve(this.result);
  }
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
