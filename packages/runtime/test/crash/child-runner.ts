// A runtime process of the crash tests (child.ts), seen from the parent: its output, waiting
// for a line, telling it to go, killing it.
import { type ChildProcess, spawn } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = join(HERE, "..", "..", "..", "..");
const CHILD = join(HERE, "child.ts");

export type Exit = { code: number | null; signal: NodeJS.Signals | null };

/** One runtime process; it idles after `loaded` until told to go. */
export class Child {
  readonly proc: ChildProcess;
  readonly exited: Promise<Exit>;
  stdout = "";
  stderr = "";
  private exit: Exit | null = null;

  constructor(
    readonly args: string[],
    env: NodeJS.ProcessEnv = process.env,
  ) {
    this.proc = spawn(process.execPath, ["--import", "tsx", CHILD, ...args], {
      cwd: ROOT,
      env,
      stdio: ["pipe", "pipe", "pipe"],
    });
    this.proc.stdout!.setEncoding("utf8").on("data", (s: string) => (this.stdout += s));
    this.proc.stderr!.setEncoding("utf8").on("data", (s: string) => (this.stderr += s));
    this.proc.stdin!.on("error", () => {});
    this.exited = new Promise((resolve) =>
      // "close", not "exit": by then the last of its stderr has been read too.
      this.proc.on("close", (code, signal) => {
        this.exit = { code, signal };
        resolve(this.exit);
      }),
    );
  }

  /** Resolves once the child printed `line`; fails if it exits first or takes too long. */
  async waitFor(line: string, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!this.stdout.split("\n").includes(line)) {
      if (this.exit)
        throw new Error(
          `child exited (${JSON.stringify(this.exit)}) before "${line}"; stderr:\n${this.stderr}`,
        );
      if (Date.now() > deadline)
        throw new Error(
          `child did not print "${line}" within ${timeoutMs} ms; stderr:\n${this.stderr}`,
        );
      await sleep(2);
    }
  }

  go(): void {
    this.proc.stdin!.write("go\n");
  }

  async kill(): Promise<Exit> {
    this.proc.kill("SIGKILL");
    return this.exited;
  }
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
