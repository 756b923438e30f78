// The refusal assertions the conformance sections share.
import { expect } from "vitest";
import { StoreError } from "../../src/store/errors.ts";

export async function refusal(promise: Promise<unknown>): Promise<StoreError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error, "expected the store to refuse").toBeInstanceOf(StoreError);
  return error as StoreError;
}

export async function expectRefused(promise: Promise<unknown>, code: string): Promise<void> {
  expect((await refusal(promise)).code).toBe(code);
}
