import { OpenComputerError } from "@opencomputer/agent";
import type { SessionEvent } from "@opencomputer/protocol";
import { integer, json, need, noExtra, out, parse } from "../../args.ts";
import { type ApiClient, seg } from "../../client.ts";
import { formatEvent } from "../../format.ts";

export const SESSIONS_USAGE = "opencomputer sessions tail <id> [--after N] [--json] [--no-follow]";

/** The server's page size (docs/api.md): a shorter page means "caught up". */
const PAGE = 500;
const POLL_MS = 500;

export async function sessionsRemote(client: () => ApiClient, argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub !== "tail")
    throw new OpenComputerError(
      "usage",
      `Unknown subcommand "sessions ${sub ?? ""}". Usage: ${SESSIONS_USAGE}`,
    );
  const { values, positionals } = parse(rest, {
    after: { type: "string" },
    json: { type: "boolean" },
    follow: { type: "boolean" },
    "no-follow": { type: "boolean" },
  });
  const id = need(positionals, 0, "the session id", SESSIONS_USAGE);
  noExtra(positionals, 1, SESSIONS_USAGE);
  const follow = !values["no-follow"] && values.follow !== false;
  let cursor = integer(values.after, "after", 0) ?? 0;
  const api = client();

  const stop = new AbortController();
  const onSignal = () => stop.abort();
  if (follow) {
    process.once("SIGINT", onSignal);
    process.once("SIGTERM", onSignal);
  }
  try {
    for (;;) {
      let events: SessionEvent[];
      try {
        ({ events } = await api.get<{ events: SessionEvent[] }>(
          `/sessions/${seg(id)}/events?after=${cursor}`,
          stop.signal,
        ));
      } catch (error) {
        if (stop.signal.aborted) return 0;
        throw error;
      }
      let ended = false;
      for (const e of events) {
        if (e.seq <= cursor) continue; // never print an event twice
        cursor = e.seq;
        if (values.json) json(e);
        else out(formatEvent(e));
        if (e.type === "session.ended") ended = true;
      }
      if (ended || stop.signal.aborted) return 0;
      if (events.length >= PAGE) continue; // a full page: read on at once
      if (!follow) return 0;
      await sleep(POLL_MS, stop.signal);
      if (stop.signal.aborted) return 0;
    }
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}
