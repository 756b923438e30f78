import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { BuiltInResult, BuiltInTool } from "@opencomputer/runtime";
import {
  BubblewrapComputerProvider,
  type BubblewrapProviderOptions,
  type Clock,
  createShellTools,
  type LifecycleEvent,
} from "../src/index.ts";

const ENSURE = join(
  dirname(fileURLToPath(import.meta.url)),
  "..",
  "scripts",
  "ensure-bubblewrap.sh",
);

/**
 * Every test here needs the real sandbox. Missing bubblewrap is a failure, never a skip:
 * a green run without it would say nothing about isolation.
 */
export function requireBubblewrap(): void {
  try {
    execFileSync("sh", [ENSURE], { stdio: "pipe" });
  } catch (error) {
    const stderr = (error as { stderr?: Buffer }).stderr?.toString() ?? String(error);
    throw new Error(`bubblewrap is required for @opencomputer/computers tests:\n${stderr}`);
  }
}

export interface Harness {
  provider: BubblewrapComputerProvider;
  shell: BuiltInTool;
  events: LifecycleEvent[];
  rootDir: string;
  run(
    sessionId: string,
    input: Record<string, unknown>,
    signal?: AbortSignal,
  ): Promise<BuiltInResult>;
  dispose(): Promise<void>;
}

export function harness(options: Partial<BubblewrapProviderOptions> = {}): Harness {
  const rootDir = mkdtempSync(join(tmpdir(), "oc-computers-"));
  const events: LifecycleEvent[] = [];
  const provider = new BubblewrapComputerProvider({
    rootDir,
    onLifecycle: (event) => events.push(event),
    ...options,
  });
  const [shell] = createShellTools(provider);
  return {
    provider,
    shell: shell!,
    events,
    rootDir,
    run: (sessionId, input, signal) =>
      shell!.execute({
        input,
        sessionId,
        turnId: "turn-1",
        toolCallId: `call-${Math.random()}`,
        agentId: "agent",
        signal: signal ?? new AbortController().signal,
        reportProgress: async () => {},
      }),
    async dispose() {
      await provider.close();
      rmSync(rootDir, { recursive: true, force: true });
    },
  };
}

export function output(result: BuiltInResult): {
  exitCode: number;
  stdout: string;
  stderr: string;
  truncated: boolean;
} {
  if (!result.ok) throw new Error(`expected success, got: ${result.message}`);
  return result.output as { exitCode: number; stdout: string; stderr: string; truncated: boolean };
}

/** Host pids whose command line is exactly `argv` (read from /proc, no `ps` parsing). */
export function hostProcesses(argv: string[]): number[] {
  const wanted = `${argv.join("\0")}\0`;
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      if (stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z")) continue;
      if (readFileSync(`/proc/${entry}/cmdline`, "utf8") === wanted) found.push(Number(entry));
    } catch {
      // The process exited while we looked.
    }
  }
  return found;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A clock the test moves by hand; timers fire when it passes their due time. */
export class ManualClock implements Clock {
  private current = 1_000_000;
  private timers: Array<{ due: number; fn: () => void; live: boolean }> = [];

  now(): number {
    return this.current;
  }

  setTimer(fn: () => void, ms: number): () => void {
    const timer = { due: this.current + ms, fn, live: true };
    this.timers.push(timer);
    return () => {
      timer.live = false;
    };
  }

  advance(ms: number): void {
    this.current += ms;
    for (const timer of this.timers) {
      if (timer.live && timer.due <= this.current) {
        timer.live = false;
        timer.fn();
      }
    }
    this.timers = this.timers.filter((t) => t.live);
  }
}
