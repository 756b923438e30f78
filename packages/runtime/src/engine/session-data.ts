// Session data: a JSON object an application gives `POST /sessions {data}`, fixed for the
// session's life, which the agent reads on every render with `useSessionData(key)`. It is
// recorded in the session's first event (`session.created`), written in the same transaction
// as the session, so it is as durable as the session and never changes.

import type { OpenComputerError } from "@opencomputer/agent";
import { assertJsonCompatible, jsonByteLength } from "@opencomputer/agent/internal";
import {
  type Budget,
  SESSION_DATA_LIMIT_BYTES,
  type SessionData,
  type SessionParent,
} from "@opencomputer/protocol";
import type { Store } from "../ports/store.ts";
import { InputError } from "./input.ts";

/** What a session was created with beyond its agent. */
export interface SessionCreation {
  data: SessionData;
  parent: SessionParent | null;
  /** What the session may spend (budget.ts); absent when it has no budget. */
  budget?: Budget;
}

const KEY_MAX_CHARS = 256;

/** Checks `data` from a client: a JSON object, keys 1–256 characters, at most 64 KiB as JSON. */
export function validateSessionData(raw: unknown, path = "data"): SessionData {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    throw new InputError("invalid_input", `${path}: must be a JSON object of keys and values`, {
      path,
    });
  }
  for (const key of Object.keys(raw)) {
    if (key.length === 0 || key.length > KEY_MAX_CHARS) {
      throw new InputError(
        "invalid_input",
        `${path}: keys are 1 to ${KEY_MAX_CHARS} characters; ${JSON.stringify(key.slice(0, 40))} is not`,
        { path },
      );
    }
  }
  let value: SessionData;
  try {
    value = assertJsonCompatible(raw, path) as SessionData;
  } catch (error) {
    const at = (error as OpenComputerError).path ?? path;
    throw new InputError("invalid_input", (error as Error).message, { path: at });
  }
  const bytes = jsonByteLength(value);
  if (bytes > SESSION_DATA_LIMIT_BYTES) {
    throw new InputError(
      "invalid_input",
      `${path}: is ${bytes} bytes of JSON; the limit is ${SESSION_DATA_LIMIT_BYTES}`,
      { path },
    );
  }
  // A copy the caller cannot change afterwards.
  return JSON.parse(JSON.stringify(value)) as SessionData;
}

/** Reads what the session was created with from its first event; null for no such session. */
export async function readCreation(
  store: Store,
  sessionId: string,
): Promise<SessionCreation | null> {
  const [first] = await store.readEvents(sessionId, 0, 1);
  if (first?.type !== "session.created") return null;
  const budget = first.data.budget;
  return {
    data: first.data.data ?? {},
    parent: first.data.parent ?? null,
    ...(budget ? { budget } : {}),
  };
}

const NOTHING: SessionCreation = Object.freeze({ data: Object.freeze({}), parent: null });

/**
 * What sessions were created with, remembered: it never changes, so a session this process
 * created (or already read) starts its turns without reading its first event again. Bounded:
 * the oldest entries go first.
 */
export class CreationMemo {
  private readonly known = new Map<string, SessionCreation>();

  constructor(private readonly limit = 10_000) {}

  remember(sessionId: string, creation: SessionCreation): void {
    if (this.known.size >= this.limit) {
      const oldest = this.known.keys().next().value;
      if (oldest !== undefined) this.known.delete(oldest);
    }
    this.known.set(sessionId, creation);
  }

  async of(store: Store, sessionId: string): Promise<SessionCreation> {
    const known = this.known.get(sessionId);
    if (known) return known;
    // A session not (yet) in the store is not remembered: it may be created later.
    const creation = await readCreation(store, sessionId);
    if (!creation) return NOTHING;
    this.remember(sessionId, creation);
    return creation;
  }
}
