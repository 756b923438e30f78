import type { MemoryKey, MemoryStore, NewMemoryBinding } from "@opencomputer/runtime";
import { MemoryError } from "@opencomputer/runtime";
import { expect } from "vitest";

export interface MemorySuite {
  memory(): MemoryStore;
}

export const KEY: MemoryKey = {
  projectId: "proj_a",
  environment: "development",
  resource: "notes",
};

/** The key with its resource registered (document memory, `maxBytes`). */
export async function withResource(
  memory: MemoryStore,
  key: MemoryKey = KEY,
  maxBytes = 64,
): Promise<MemoryKey> {
  await memory.putResource(key.projectId, key.environment, key.resource, {
    kind: "document",
    maxBytes,
  });
  return key;
}

export function binding(key: MemoryKey, over: Partial<NewMemoryBinding> = {}): NewMemoryBinding {
  return {
    projectId: key.projectId,
    environment: key.environment,
    resource: key.resource,
    scope: "document",
    id: "workshop",
    access: "read-write",
    ...over,
  };
}

/** The MemoryError `promise` rejects with, checked for its code (and path when given). */
export async function refused(
  promise: Promise<unknown>,
  code: string,
  path?: string,
): Promise<MemoryError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error, `expected a MemoryError ${code}`).toBeInstanceOf(MemoryError);
  const e = error as MemoryError;
  expect({ code: e.code, message: e.message }).toMatchObject({ code });
  if (path !== undefined) expect(e.details.path).toBe(path);
  return e;
}
