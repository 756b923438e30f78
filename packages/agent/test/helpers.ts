import { expect } from "vitest";
import { OpenComputerError, type ToolDefinition } from "../src/index.ts";

/** Runs `fn` and returns what it threw; fails the test when it does not throw. */
export function thrown(fn: () => unknown): OpenComputerError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(OpenComputerError);
    return error as OpenComputerError;
  }
  throw new Error("expected the call to throw");
}

/** Asserts `fn` throws an error of `type` with `code` whose message contains every fragment. */
export function expectFailure(
  fn: () => unknown,
  type: new (...args: never[]) => OpenComputerError,
  code: string,
  ...fragments: string[]
): OpenComputerError {
  const error = thrown(fn);
  expect(error).toBeInstanceOf(type);
  expect(error.code).toBe(code);
  for (const fragment of fragments) expect(error.message).toContain(fragment);
  return error;
}

/** Passes a deliberately ill-typed definition through, as plain JavaScript callers could. */
export function loose(definition: unknown): ToolDefinition {
  return definition as ToolDefinition;
}
