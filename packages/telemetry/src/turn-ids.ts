// The ids that tie every process's spans of one turn together. A turn can be run by several
// processes (a crash and a takeover, a worker lost and replaced); none of them can ask the
// others for a trace id, so each derives it from the turn id: the same turn always has the
// same trace, and its own span the same span id, wherever and however often it runs.

import { createHash } from "node:crypto";

function digest(kind: string, turnId: string): string {
  return createHash("sha256").update(`opencomputer.${kind}\0${turnId}`).digest("hex");
}

/** 32 lowercase hex digits, never all zero (an invalid trace id). */
export function traceIdOf(turnId: string): string {
  const id = digest("trace", turnId).slice(0, 32);
  return /^0+$/.test(id) ? `${id.slice(0, 31)}1` : id;
}

/** 16 lowercase hex digits: the span id of the turn's own span. */
export function turnSpanIdOf(turnId: string): string {
  const id = digest("turn", turnId).slice(0, 16);
  return /^0+$/.test(id) ? `${id.slice(0, 15)}1` : id;
}
