import { newId } from "../ids.ts";

// A claim (`claimedBy`) names the runtime and this start of it: `<runtimeId>#<incarnation>`.
// A runtime may keep its name across restarts (OPENCOMPUTER_RUNTIME_ID), so the name alone
// cannot tell this process's own running apply from one a killed earlier start left behind.
const SEPARATOR = "#";

/** This start's name in claims: the runtime's name and a fresh id per start. */
export function newClaimant(runtimeId: string): string {
  return `${runtimeId}${SEPARATOR}${newId("inc")}`;
}

/** The runtime a claim names (a claim without an incarnation is the runtime's name alone). */
export function claimRuntime(claimedBy: string): string {
  const at = claimedBy.lastIndexOf(SEPARATOR);
  return at < 0 ? claimedBy : claimedBy.slice(0, at);
}

/**
 * Whose claim it is, seen from `self` (this start's claimant):
 * - `mine`: this process claimed it; its apply may be running here (it settles it itself);
 * - `dead`: an earlier start of this runtime claimed it; one name runs in one process at a
 *   time, so that start is gone and its apply cannot still be running;
 * - `other`: another runtime, alive or not; only time tells (`applyTimeoutMs`).
 */
export function claimOwner(claimedBy: string | null, self: string): "mine" | "dead" | "other" {
  if (claimedBy === self) return "mine";
  if (claimedBy !== null && claimRuntime(claimedBy) === claimRuntime(self)) return "dead";
  return "other";
}
