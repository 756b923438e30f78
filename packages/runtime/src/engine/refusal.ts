import { StoreError } from "../ports/store-errors.ts";

/** True when the store refused a write because this runtime may no longer write for the turn. */
export function isFenceRefusal(error: unknown): boolean {
  return (
    error instanceof StoreError &&
    (error.code === "stale_epoch" ||
      error.code === "turn_not_active" ||
      error.code === "session_state")
  );
}
