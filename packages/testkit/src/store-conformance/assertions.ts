// The refusal assertions the conformance sections share.

import { StoreError } from "@opencomputer/runtime";
import { expect } from "vitest";

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
