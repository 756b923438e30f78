// What `dev` and `server` run for outbound event delivery: the subscription routes and the
// dispatcher that posts deliveries (every process on the store runs one; leases keep each
// attempt to one process).
import { EventDispatcher, EventSubscriptions } from "@opencomputer/event-delivery";
import type { DeliveryStore } from "@opencomputer/runtime";
import type { HandlerOptions } from "@opencomputer/server";

export interface RunningEventDelivery {
  handler: Pick<HandlerOptions, "eventSubscriptions">;
  close(): Promise<void>;
}

/**
 * Plain-http loopback destinations are accepted under `dev`, or when
 * OPENCOMPUTER_EVENTS_ALLOW_LOOPBACK_HTTP=1 (for tests against a local receiver); every other
 * destination must be https://. OPENCOMPUTER_EVENTS_POLL_MS sets the dispatcher's pass interval
 * (default 500).
 */
export function startEventDelivery(
  holder: string,
  store: DeliveryStore,
  dev: boolean,
  env: NodeJS.ProcessEnv = process.env,
): RunningEventDelivery {
  const allowLoopbackHttp = dev || env.OPENCOMPUTER_EVENTS_ALLOW_LOOPBACK_HTTP === "1";
  const poll = Number(env.OPENCOMPUTER_EVENTS_POLL_MS ?? 500);
  const dispatcher = new EventDispatcher({
    store,
    holder,
    pollMs: Number.isInteger(poll) && poll >= 10 ? poll : 500,
    onError: (error) => process.stderr.write(`warning: event delivery: ${String(error)}\n`),
  });
  dispatcher.start();
  return {
    handler: { eventSubscriptions: new EventSubscriptions({ store, allowLoopbackHttp }) },
    close: () => dispatcher.stop(),
  };
}
