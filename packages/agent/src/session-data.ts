// `useSessionData(key)`: one value of the session data the application created the session with
// (`POST /sessions {data}`). The runtime hands the whole snapshot to every render; it is frozen,
// so agent code cannot change what later renders read.

import { RenderError } from "./errors.ts";
import { currentRender } from "./render-context.ts";
import type { JsonValue } from "./types.ts";

/**
 * Reads `key` from the session's data: `undefined` when the session has no such key. The type
 * argument is the value you expect; the runtime only guarantees it is JSON.
 */
export function useSessionData<T = JsonValue>(key: string): T | undefined {
  const state = currentRender();
  if (typeof key !== "string" || key.length === 0) {
    throw new RenderError(
      "session_data_key_invalid",
      `useSessionData expects a non-empty string key; got ${key === "" ? "an empty string" : typeof key}`,
    );
  }
  const data = state.sessionData;
  if (data === undefined || !Object.hasOwn(data, key)) return undefined;
  return data[key] as T;
}
