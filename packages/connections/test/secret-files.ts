// A fresh project directory per test for the secret store's files, and a helper that awaits
// a refusal and checks it is a SecretError.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect } from "vitest";
import { SecretError } from "../src/index.ts";

export interface SecretFiles {
  dir: string;
  paths: { file: string; keyFile: string };
}

/** Registers the per-test directory; the returned object holds the current test's paths. */
export function secretFiles(prefix: string): SecretFiles {
  const files: SecretFiles = { dir: "", paths: { file: "", keyFile: "" } };
  beforeEach(() => {
    files.dir = mkdtempSync(join(tmpdir(), prefix));
    files.paths = {
      file: join(files.dir, ".opencomputer", "secrets.json"),
      keyFile: join(files.dir, ".opencomputer", "secret.key"),
    };
  });
  afterEach(() => rmSync(files.dir, { recursive: true, force: true }));
  return files;
}

export async function refusal(promise: Promise<unknown>): Promise<SecretError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(SecretError);
  return error as SecretError;
}
