// Fixture projects and positions for the build tests.

import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect } from "vitest";
import type { BuildError } from "../src/errors.ts";

export const FIXTURES = fileURLToPath(new URL("./fixtures", import.meta.url));
// Inside the repository (so `@opencomputer/agent` resolves from the copies), and gitignored.
const OUTPUT = fileURLToPath(new URL("../test-output", import.meta.url));

export function fixture(name: string): string {
  return join(FIXTURES, name);
}

/** A fresh copy of a fixture project, for tests that write deployments or change sources. */
export function copyFixture(name: string): { dir: string; remove: () => void } {
  mkdirSync(OUTPUT, { recursive: true });
  const dir = join(OUTPUT, `${name}-${process.pid}-${Math.random().toString(36).slice(2, 8)}`);
  cpSync(fixture(name), dir, { recursive: true });
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * Where `needle` starts in a project file, 1-based, as the build reports positions. With
 * `within`, the needle is looked for inside the first occurrence of that longer text.
 */
export function at(
  projectDir: string,
  file: string,
  needle: string,
  within?: string,
): { file: string; line: number; column: number } {
  const text = readFileSync(join(projectDir, file), "utf8");
  const outer = within === undefined ? 0 : text.indexOf(within);
  if (outer < 0) throw new Error(`"${within}" not found in ${file}`);
  const index = text.indexOf(needle, outer);
  if (index < 0) throw new Error(`"${needle}" not found in ${file}`);
  const before = text.slice(0, index).split("\n");
  return { file, line: before.length, column: before[before.length - 1]!.length + 1 };
}

/** Exactly one error in `file`'s directory prefix, with this code and position. */
export function expectOnlyError(
  errors: BuildError[],
  prefix: string,
  expected: { code: string; file: string; line: number; column: number },
): BuildError {
  const mine = errors.filter((e) => e.file.startsWith(prefix));
  expect(mine.map(({ code, file, line, column }) => ({ code, file, line, column }))).toEqual([
    expected,
  ]);
  return mine[0]!;
}

/**
 * A project written from `files` in the repository's gitignored test-output (so
 * `@opencomputer/agent` resolves), and its removal.
 */
export function writeProject(files: Record<string, string>): { dir: string; remove: () => void } {
  mkdirSync(OUTPUT, { recursive: true });
  const dir = join(OUTPUT, `project-${process.pid}-${Math.random().toString(36).slice(2, 8)}`);
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    writeFileSync(join(dir, file), text);
  }
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
