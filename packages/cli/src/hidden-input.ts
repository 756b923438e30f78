// Reading a secret a person types or pipes: from stdin when it is not a terminal (scripts, CI),
// else at a prompt that does not echo it. Used for secret values and API keys.

import { OpenComputerError } from "@opencomputer/agent";

export interface HiddenInputIO {
  stdin: NodeJS.ReadStream | NodeJS.ReadableStream;
  stderr: { write(text: string): unknown };
}

/** The value from stdin, without its final line break; or typed at a prompt that hides it. */
export async function readHidden(io: HiddenInputIO, label: string): Promise<string> {
  const stdin = io.stdin as NodeJS.ReadStream;
  if (stdin.isTTY) return prompt(stdin, io, label);
  const chunks: Buffer[] = [];
  for await (const chunk of stdin) chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks)
    .toString("utf8")
    .replace(/\r?\n$/, "");
}

function prompt(stdin: NodeJS.ReadStream, io: HiddenInputIO, label: string): Promise<string> {
  io.stderr.write(`${label} (not shown): `);
  return new Promise((resolvePrompt, reject) => {
    let value = "";
    stdin.setRawMode(true);
    stdin.resume();
    stdin.setEncoding("utf8");
    const done = (error?: Error) => {
      stdin.setRawMode(false);
      stdin.pause();
      stdin.off("data", onData);
      io.stderr.write("\n");
      if (error) reject(error);
      else resolvePrompt(value);
    };
    const onData = (text: string) => {
      for (const char of text) {
        if (char === "\r" || char === "\n") return done();
        if (char === "\u0003") return done(new OpenComputerError("usage", "cancelled"));
        if (char === "\u007f" || char === "\b") value = value.slice(0, -1);
        else value += char;
      }
    };
    stdin.on("data", onData);
  });
}
