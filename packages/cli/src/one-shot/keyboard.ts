import { createInterface, type Interface } from "node:readline";
import { OpenComputerError } from "@opencomputer/agent";

/**
 * Line input for the one-shot's questions and approval cards. Reads stdin whether it is a
 * terminal or a pipe (tests and scripts pipe their answers); a closed stdin while a question
 * waits is an error, not a hang.
 */
export class Keyboard {
  private readonly rl: Interface;
  private readonly lines: string[] = [];
  private waiting: ((line: string | null) => void) | null = null;
  private closed = false;

  constructor(
    input: NodeJS.ReadableStream = process.stdin,
    private readonly output: NodeJS.WritableStream = process.stderr,
  ) {
    this.rl = createInterface({ input, terminal: false });
    this.rl.on("line", (line) => {
      if (this.waiting) {
        const w = this.waiting;
        this.waiting = null;
        w(line);
      } else this.lines.push(line);
    });
    this.rl.on("close", () => {
      this.closed = true;
      this.waiting?.(null);
      this.waiting = null;
    });
  }

  async ask(prompt: string): Promise<string> {
    this.output.write(prompt);
    const line =
      this.lines.shift() ??
      (this.closed
        ? null
        : await new Promise<string | null>((resolve) => {
            this.waiting = resolve;
          }));
    if (line === null)
      throw new OpenComputerError("input_closed", "stdin closed while waiting for an answer");
    return line.trim();
  }

  close(): void {
    this.rl.close();
  }
}
