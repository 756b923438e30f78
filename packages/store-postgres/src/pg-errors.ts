// PostgreSQL's own errors never leave the store for a refusal: a taken unique key (SQLSTATE
// 23505, unique_violation) becomes the port's `duplicate`.
import { StoreError } from "@opencomputer/runtime";

export function toStoreError(error: unknown): unknown {
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
