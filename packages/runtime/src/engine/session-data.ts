// Session data: a JSON object an application gives `POST /sessions {data}`, fixed for the
// session's life, which the agent reads on every render with `useSessionData(key)`. It is
// recorded in the session's first event (`session.created`), written in the same transaction
// as the session, so it is as durable as the session and never changes.

import type { OpenComputerError } from "@opencomputer/agent";
import { assertJsonCompatible, jsonByteLength } from "@opencomputer/agent/internal";
import {
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

/** Reads what the session was created with from its first event. */
export async function readCreation(store: Store, sessionId: string): Promise<SessionCreation> {
  const [first] = await store.readEvents(sessionId, 0, 1);
  if (first?.type !== "session.created") return { data: {}, parent: null };
  return { data: first.data.data ?? {}, parent: first.data.parent ?? null };
}
