import { EVENT_DATA, envelopeFields, isEventType, type SessionEvent } from "./events/catalog.ts";
import { check, type Issue, object, string } from "./shape.ts";

const envelope = object({ ...envelopeFields, type: string(), data: object({}) });

/**
 * Checks one stored event against the protocol: the envelope, a known type, and that type's
 * data exactly (no missing field, no undeclared one). An empty list means it conforms.
 */
export function eventIssues(event: unknown): Issue[] {
  const issues = check(envelope, event).filter((issue) => !issue.path.startsWith("$.data"));
  const e = event as { type?: unknown; data?: unknown };
  if (typeof e?.type !== "string") return issues;
  if (!isEventType(e.type)) {
    issues.push({ path: "$.type", message: `unknown event type "${e.type}"` });
    return issues;
  }
  return [...issues, ...check(EVENT_DATA[e.type], e.data, "$.data")];
}

/** Same check for an event a producer is about to write (no seq, id or timestamp yet). */
export function newEventIssues(event: unknown): Issue[] {
  const e = event as { type?: unknown; data?: unknown; turnId?: unknown };
  if (typeof e?.type !== "string") return [{ path: "$.type", message: "expected a string" }];
  if (!isEventType(e.type)) return [{ path: "$.type", message: `unknown event type "${e.type}"` }];
  const issues = check(EVENT_DATA[e.type], e.data, "$.data");
  if (e.turnId !== undefined && typeof e.turnId !== "string") {
    issues.push({ path: "$.turnId", message: "expected a string" });
  }
  return issues;
}

export class ProtocolError extends Error {
  readonly code = "protocol_mismatch";
  constructor(
    readonly issues: Issue[],
    what: string,
  ) {
    super(
      `${what} does not match the protocol: ${issues
        .slice(0, 5)
        .map((i) => `${i.path}: ${i.message}`)
        .join("; ")}`,
    );
  }
}

/** Narrows after checking; throws ProtocolError naming every field at fault. */
export function assertEvent(event: unknown): asserts event is SessionEvent {
  const issues = eventIssues(event);
  if (issues.length > 0) {
    const type = (event as { type?: unknown })?.type;
    throw new ProtocolError(issues, `Event ${typeof type === "string" ? type : "?"}`);
  }
}
