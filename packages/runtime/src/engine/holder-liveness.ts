// Whether a lease holder is certainly dead, judged on this machine. Only "dead" is acted on, so
// every doubt answers "not dead" and leaves the holder its lease until it expires: a holder on
// another machine or in another pid namespace, an id without an incarnation, an unreadable /proc.
import { type Incarnation, type ProcessProbe, parseIncarnation } from "./incarnation.ts";

/**
 * True when `holder` names a process of this machine and pid namespace that no longer runs:
 * its pid is gone, belongs to a later process (another start time: the pid was reused), or is
 * a zombie (killed, not yet reaped). A live process, even a stopped one, is never dead.
 */
export function isDeadHolder(holder: string, probe: ProcessProbe): boolean {
  const self = probe.self();
  const them = parseIncarnation(holder);
  if (self === null || them === null || !sameMachine(self, them)) return false;
  if (them.pid === self.pid && them.startTime === self.startTime) return false;
  const stat = probe.stat(them.pid);
  if (stat === null) return true;
  if (stat.startTime !== them.startTime) return true;
  return stat.state === "Z" || stat.state === "X";
}

function sameMachine(a: Incarnation, b: Incarnation): boolean {
  return a.bootId === b.bootId && a.pidNamespace === b.pidNamespace;
}
