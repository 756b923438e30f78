// Which egress tokens may still be used. A token is live from the moment the runtime asks for it
// until its tool call (run, preview, apply) settles and the runtime revokes it, or until it
// expires, whichever is first: agent code that leaks its connection to a timer or a stray
// promise cannot call out after the call is over. Revoking also aborts the token's requests
// still in flight, so nothing started by a finished call keeps talking to an origin.

import { EgressRefusal } from "./refusal.ts";

interface Live {
  expiresAt: number;
  requests: Set<AbortController>;
}

/** How often (at most) expired entries of tokens never revoked are dropped. */
const PRUNE_EVERY_MS = 60_000;

export class LiveTokens {
  private readonly live = new Map<string, Live>();
  private nextPrune: number;

  constructor(private readonly now: () => number) {
    this.nextPrune = now() + PRUNE_EVERY_MS;
  }

  add(id: string, expiresAt: number): void {
    this.prune();
    this.live.set(id, { expiresAt, requests: new Set() });
  }

  isLive(id: string | undefined): boolean {
    const entry = id === undefined ? undefined : this.live.get(id);
    return entry !== undefined && entry.expiresAt > this.now();
  }

  /** Ties a request's controller to its token; call the returned function when it is done. */
  track(id: string, controller: AbortController): () => void {
    const requests = this.live.get(id)?.requests;
    requests?.add(controller);
    return () => requests?.delete(controller);
  }

  /** Ends the token and aborts its requests in flight; false when it was not live. */
  revoke(id: string): boolean {
    const entry = this.live.get(id);
    if (!entry) return false;
    this.live.delete(id);
    const reason = new EgressRefusal(
      499,
      "egress_cancelled",
      "the request was cancelled: the tool call that made it has ended",
    );
    for (const controller of entry.requests) controller.abort(reason);
    return true;
  }

  get size(): number {
    return this.live.size;
  }

  /** Tokens nobody revoked (a runtime without revoke, a crash) leave when they expire. */
  private prune(): void {
    const now = this.now();
    if (now < this.nextPrune) return;
    this.nextPrune = now + PRUNE_EVERY_MS;
    for (const [id, entry] of this.live) {
      if (entry.expiresAt <= now) this.live.delete(id);
    }
  }
}
