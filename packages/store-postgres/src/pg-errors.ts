// PostgreSQL's own errors never leave the store for a refusal: a taken unique key (SQLSTATE
// 23505, unique_violation) becomes the port's `duplicate`, oc_write's own refusals (SQLSTATE
// OC001) the StoreError they name.
import { StoreError } from "@opencomputer/runtime";

export function toStoreError(error: unknown): unknown {
  // oc_write's refusals (write-function.ts): the store's code in DETAIL.
  if (error instanceof Error && (error as { code?: unknown }).code === "OC001") {
    const code = (error as { detail?: string }).detail ?? "invalid_batch";
    return new StoreError(code, error.message);
  }
  if (error instanceof Error && (error as { code?: unknown }).code === "23505") {
    const constraint = (error as { constraint?: string }).constraint;
    return new StoreError(
      "duplicate",
      `A unique key is already taken: ${error.message}`,
      constraint === undefined ? {} : { constraint },
      { cause: error },
    );
  }
  return error;
}
