// `opencomputer session attach <id>` against a server: see session/attach in one-shot/attach.ts.

import type { SessionEvent } from "@opencomputer/protocol";
import { need, noExtra, parse } from "../../args.ts";
import type { ApiClient } from "../../client.ts";
import { formatEvent } from "../../format.ts";
import { runAttach } from "../../one-shot/attach.ts";
import { httpBackend } from "../../one-shot/http-backend.ts";
import { Keyboard } from "../../one-shot/keyboard.ts";

export const ATTACH_USAGE = `opencomputer session attach <id> [--from-now] [--follow] [--interactive] [--json] [--verbose]
  e.g.  opencomputer session attach ses_0123…      (answer its questions and approvals)`;

export async function attachRemote(client: () => ApiClient, argv: string[]): Promise<number> {
  const { values, positionals } = parse(
    argv,
    {
      "from-now": { type: "boolean" },
      follow: { type: "boolean" },
      interactive: { type: "boolean" },
      "no-interactive": { type: "boolean" },
      json: { type: "boolean" },
      verbose: { type: "boolean" },
    },
    ATTACH_USAGE,
  );
  const sessionId = need(positionals, 0, "the session id", ATTACH_USAGE);
  noExtra(positionals, 1, ATTACH_USAGE);
  const json = values.json ?? false;
  const tty = process.stdin.isTTY === true;
  const interactive = values["no-interactive"] ? false : (values.interactive ?? (tty && !json));
  const keyboard = interactive ? new Keyboard() : undefined;
  const backend = httpBackend(client());
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.once("SIGINT", onSignal);
  try {
    const end = await runAttach(backend, {
      sessionId,
      fromNow: values["from-now"] ?? false,
      print: (e: SessionEvent) => process.stdout.write(`${printEvent(e, json, values.verbose)}\n`),
      say: (line) => process.stderr.write(`${line}\n`),
      flush: () => new Promise((done) => process.stdout.write("", () => done())),
      // In a terminal it follows until Ctrl-C; from a script, until the session is at rest.
      untilIdle: !(values.follow ?? tty),
      signal: stop.signal,
      ...(keyboard ? { keyboard } : {}),
    });
    const view = await backend.session(sessionId);
    if (!json) {
      process.stderr.write(`session ${sessionId}: ${end === "ended" ? "ended" : view.status}\n`);
      if (view.question) process.stderr.write(`waiting for an answer: ${view.question.text}\n`);
    }
    return 0;
  } finally {
    process.off("SIGINT", onSignal);
    keyboard?.close();
    await backend.close();
  }
}

/** One event: NDJSON with --json; a line, plus its whole data with --verbose. */
export function printEvent(e: SessionEvent, json: boolean, verbose = false): string {
  if (json) return JSON.stringify(e);
  const line = formatEvent(e);
  return verbose ? `${line}\n${indent(JSON.stringify(e.data, null, 2))}` : line;
}

function indent(text: string): string {
  return text
    .split("\n")
    .map((l) => `        ${l}`)
    .join("\n");
}
