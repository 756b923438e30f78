// Taking over from a lease holder that died on this machine at once, instead of waiting out its
// lease (docs/architecture.md, "Leases"). Its leases are ended, not handed over: the session's
// next claim is an ordinary acquire, which bumps the epoch, so fencing refuses anything the dead
// holder left in flight exactly as after an expiry.
import type { EngineContext } from "./context.ts";
import { isDeadHolder } from "./holder-liveness.ts";

/** Ends the leases of every holder of live work that this machine knows is dead. */
export async function expireDeadHolders(ctx: EngineContext): Promise<string[]> {
  if (ctx.processProbe.self() === null) return [];
  const freed: string[] = [];
  for (const holder of await ctx.store.listLeaseHolders()) {
    if (holder === ctx.runtimeId) continue;
    freed.push(...(await expireIfDead(ctx, holder)));
  }
  return freed;
}

/** Ends `holder`'s leases when it is dead; the sessions freed (none while it may be alive). */
export async function expireIfDead(ctx: EngineContext, holder: string): Promise<string[]> {
  if (!isDeadHolder(holder, ctx.processProbe)) return [];
  const freed = await ctx.store.expireLeasesOf(holder);
  if (freed.length > 0) {
    ctx.log.warn("lease holder is dead; its leases were ended", {
      holder,
      sessions: freed.length,
    });
  }
  return freed;
}
