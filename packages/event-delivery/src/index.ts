export { attemptDelivery, type FetchLike, signingSecrets, USER_AGENT } from "./attempt.ts";
export { deliveryBody, deliveryData, MAX_RESULT_BYTES } from "./body.ts";
export { checkDestination, EventSubscriptionError, isLoopback } from "./destination.ts";
export { type DispatcherOptions, EventDispatcher } from "./dispatcher.ts";
export { checkReplay, MAX_REPLAY, type ReplayBody } from "./replay.ts";
export { MAX_ATTEMPTS, RETRY_DELAYS_MS, retryAfterMs, retryDelay, verdict } from "./retry.ts";
export {
  type CreatedSubscription,
  EventSubscriptions,
  type EventSubscriptionsOptions,
  publicDelivery,
  publicSubscription,
  ROTATION_OVERLAP_MS,
} from "./subscriptions.ts";
