// The egress gateway's events (egress.request / egress.response / egress.failed) belong in the
// session's log beside the tool call that caused them. They are facts about requests that were
// made, so they are recorded unfenced. No new request starts after its call settles (the call's
// token is revoked then, egress-for.ts); one still in flight is aborted, and its egress.failed,
// which may land after the call's own events, is still logged.

import { type JsonValue, newEventIssues } from "@opencomputer/protocol";
import type { NewEvent } from "../ports/store.ts";
import { type EngineContext, write } from "./context.ts";
import { InputError } from "./input.ts";

/** What the gateway reports: checked against the protocol here, where it enters the log. */
export interface EgressEventInput {
  type: string;
  turnId?: string;
  data: JsonValue;
}

const EGRESS_TYPES = new Set(["egress.request", "egress.response", "egress.failed"]);

export async function recordEgressEvent(
  ctx: EngineContext,
  sessionId: string,
  event: EgressEventInput,
): Promise<void> {
  if (!EGRESS_TYPES.has(event.type)) {
    throw new InputError("invalid_input", `type: must be one of ${[...EGRESS_TYPES].join(", ")}`, {
      path: "type",
    });
  }
  const entry = {
    type: event.type,
    ...(event.turnId ? { turnId: event.turnId } : {}),
    data: event.data,
  };
  const issue = newEventIssues(entry)[0];
  if (issue) {
    throw new InputError("invalid_input", `${issue.path}: ${issue.message}`, { path: issue.path });
  }
  await write(ctx, sessionId, { ops: [], events: [entry as NewEvent] });
}
