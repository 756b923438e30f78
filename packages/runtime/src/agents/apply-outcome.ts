// What an `apply` that returned normally is recorded with. Returning is the signal that the
// write happened, so a value the event log cannot hold (a `Response`, a class instance with
// methods, a BigInt) must not turn an applied approval into a failed one a person might redo.
// It is replaced by a JSON description, and the outcome carries a warning saying so.

import { assertJsonCompatible, describeValue } from "@opencomputer/agent/internal";
import type { JsonValue } from "@opencomputer/protocol";
import type { CodeOutcome } from "../ports/agent-execution.ts";

export function applyOutcome(tool: string, outcome: unknown): CodeOutcome {
  try {
    return { ok: true, value: assertJsonCompatible(outcome === undefined ? null : outcome, "$") };
  } catch (error) {
    return {
      ok: true,
      value: describeOutcome(outcome),
      warning:
        `${tool}'s apply returned a value that is not JSON-compatible, so its description was ` +
        `recorded instead (${(error as Error).message}). Return plain data from apply, such ` +
        "as the fields of the response you need.",
    };
  }
}

/** A JSON stand-in that keeps what a person checking the apply would look for. */
function describeOutcome(value: unknown): JsonValue {
  if (typeof Response !== "undefined" && value instanceof Response) {
    return {
      notJson: "a Response",
      status: value.status,
      statusText: value.statusText,
      url: value.url,
      ok: value.ok,
    };
  }
  return { notJson: describeValue(value) };
}
