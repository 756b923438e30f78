// Where connection.fetch finds the egress gateway and its token: an AsyncLocalStorage the
// runtime enters around every execution of agent code (tool `run`, `preview`, `apply`), in the
// runtime process or in a worker process with values it received over IPC. The token is
// short-lived and names one session, so agent code holds no credential worth stealing.
//
// The storage lives on globalThis under a registry symbol: the runtime may enter it through its
// own copy of this package while the author's connection comes from another copy.

import { AsyncLocalStorage } from "node:async_hooks";

/** Runtime-internal: what `runWithEgress` makes current. */
export interface EgressContext {
  /** The gateway's URL for this session (opaque to agent code). */
  gatewayUrl: string;
  /** The session's short-lived egress token. */
  token: string;
  /** Aborts every request made in this context (the tool call's signal). */
  signal?: AbortSignal;
}

const EGRESS_SLOT = Symbol.for("opencomputer.agent.egressContext");
const EGRESS_STATE_VERSION = 1;

interface EgressSlot {
  version: typeof EGRESS_STATE_VERSION;
  storage: AsyncLocalStorage<EgressContext>;
}

function slot(): EgressSlot {
  const holder = globalThis as { [EGRESS_SLOT]?: EgressSlot };
  let current = holder[EGRESS_SLOT];
  if (current === undefined) {
    current = { version: EGRESS_STATE_VERSION, storage: new AsyncLocalStorage<EgressContext>() };
    holder[EGRESS_SLOT] = current;
  }
  return current;
}

/**
 * Runtime-internal (not for agent authors): runs `fn` with `context` as the egress context of
 * every `connection.fetch` it makes, including in callbacks and promises it starts.
 */
export function runWithEgress<T>(context: EgressContext, fn: () => T): T {
  return slot().storage.run(Object.freeze({ ...context }), fn);
}

/** The current egress context, or undefined outside `runWithEgress`. */
export function currentEgress(): EgressContext | undefined {
  const current = slot();
  if (current.version !== EGRESS_STATE_VERSION) return undefined;
  return current.storage.getStore();
}
