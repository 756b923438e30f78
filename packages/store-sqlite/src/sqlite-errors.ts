// SQLite's own errors never leave the store for a refusal: a taken unique key becomes the
// port's `duplicate`.
import { StoreError } from "@opencomputer/runtime";

const DUPLICATE_CODES = new Set(["SQLITE_CONSTRAINT_UNIQUE", "SQLITE_CONSTRAINT_PRIMARYKEY"]);

export function toStoreError(error: unknown): unknown {
  if (error instanceof Error && DUPLICATE_CODES.has((error as { code?: string }).code ?? "")) {
    return new StoreError(
      "duplicate",
      `A unique key is already taken: ${error.message}`,
      {},
      {
        cause: error,
      },
    );
  }
  return error;
}
