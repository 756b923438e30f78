import { useEffect, useRef, useState, useSyncExternalStore } from "react";
import type { FetchLike } from "./api.ts";
import { AgentClient, type AgentClientOptions, type AgentSnapshot } from "./client.ts";
import type { MemorySave } from "./fold.ts";
import type { SessionEvent } from "./types.ts";

export interface UseAgentOptions {
  sessionId?: string;
  /** Where the API is mounted (default `""`, the page's origin). */
  basePath?: string;
  fetch?: FetchLike;
  headers?: Record<string, string>;
  after?: number;
  /** `"stream"` (default: one SSE connection) or `"poll"`; see AgentClientOptions. */
  transport?: "stream" | "poll";
  pollIntervalMs?: number;
  onEvent?: (event: SessionEvent) => void;
  /** Each `memory.saved` event (`resource`, `documentId`, `revision`, `bytes`). */
  onMemorySaved?: (save: MemorySave) => void;
}

export interface UseAgentResult extends AgentSnapshot {
  send: AgentClient["send"];
  /** Create mode: creates the session without sending anything; resolves with its id. */
  create: AgentClient["create"];
  stop: AgentClient["stop"];
  answer: AgentClient["answer"];
  decide: AgentClient["decide"];
  retry: AgentClient["retry"];
  dismiss: AgentClient["dismiss"];
  /** The underlying client (its `api` reaches every other route). */
  client: AgentClient;
}

/**
 * `useAgent({ sessionId, basePath })` follows a session; `useAgent("agent@development", opts)`
 * creates one on the first `send`. A new sessionId, agent or basePath makes a new client; other
 * option changes (a new `fetch` or `onEvent` closure each render) are picked up in place.
 */
export function useAgent(
  target: string | UseAgentOptions,
  options: UseAgentOptions = {},
): UseAgentResult {
  const opts: UseAgentOptions = typeof target === "string" ? options : target;
  const agentId = typeof target === "string" ? target : undefined;
  const latest = useRef(opts);
  latest.current = opts;
  const identity = `${agentId ?? ""}|${opts.sessionId ?? ""}|${opts.basePath ?? ""}`;
  const [held, setHeld] = useState<{ identity: string; client: AgentClient }>(() => ({
    identity,
    client: makeClient(agentId, opts, latest),
  }));
  let client = held.client;
  if (held.identity !== identity) {
    client = makeClient(agentId, opts, latest);
    setHeld({ identity, client });
  }
  useEffect(() => {
    client.start();
    return () => client.dispose();
  }, [client]);
  useEffect(() => {
    client.setOnEvent(
      opts.onEvent ? (e) => latest.current.onEvent?.(e) : undefined,
      opts.onMemorySaved ? (save) => latest.current.onMemorySaved?.(save) : undefined,
    );
  }, [client, opts.onEvent, opts.onMemorySaved]);
  const snapshot = useSyncExternalStore(client.subscribe, client.getSnapshot, client.getSnapshot);
  return {
    ...snapshot,
    send: (text, mode) => client.send(text, mode),
    create: () => client.create(),
    stop: () => client.stop(),
    answer: (a) => client.answer(a),
    decide: (id, decision, by) => client.decide(id, decision, by),
    retry: (id) => client.retry(id),
    dismiss: (id) => client.dismiss(id),
    client,
  };
}

function makeClient(
  agentId: string | undefined,
  opts: UseAgentOptions,
  latest: { current: UseAgentOptions },
): AgentClient {
  const options: AgentClientOptions = {
    basePath: opts.basePath ?? "",
    // Read through the ref so a new fetch or headers object does not restart the client.
    fetch: (input, init) => {
      const { fetch: custom, headers } = latest.current;
      const merged = headers
        ? { ...init, headers: { ...(init?.headers as object), ...headers } }
        : init;
      return custom ? custom(input, merged) : globalThis.fetch(input, merged);
    },
    ...(opts.sessionId ? { sessionId: opts.sessionId } : {}),
    ...(agentId ? { agentId } : {}),
    ...(opts.after !== undefined ? { after: opts.after } : {}),
    ...(opts.transport !== undefined ? { transport: opts.transport } : {}),
    ...(opts.pollIntervalMs !== undefined ? { pollIntervalMs: opts.pollIntervalMs } : {}),
  };
  return new AgentClient(options);
}
