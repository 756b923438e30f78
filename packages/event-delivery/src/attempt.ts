// One HTTP request of a delivery: signed, POSTed to exactly the destination, no redirect
// followed, abandoned after the timeout. The response body is never read beyond discarding it.
import { signEventDelivery } from "@opencomputer/event-receiver";
import type { DeliveryRow, EventSubscriptionRow } from "@opencomputer/runtime";
import { deliveryBody } from "./body.ts";
import type { AttemptResult } from "./retry.ts";

export const USER_AGENT = "opencomputer-event-delivery/1";

export type FetchLike = (url: string, init: RequestInit) => Promise<Response>;

/** The secrets that sign now: the current one, and the previous one within its window. */
export function signingSecrets(sub: EventSubscriptionRow, now: number): string[] {
  const secrets = [sub.secret];
  if (
    sub.previousSecret !== null &&
    sub.previousSecretUntil !== null &&
    now < sub.previousSecretUntil
  )
    secrets.push(sub.previousSecret);
  return secrets;
}

export async function attemptDelivery(
  row: DeliveryRow,
  sub: EventSubscriptionRow,
  options: { fetch: FetchLike; now: number; timeoutMs: number },
): Promise<AttemptResult> {
  const url = new URL(sub.destination.url);
  const body = deliveryBody(row);
  const timestamp = Math.floor(options.now / 1000);
  const signature = await signEventDelivery(signingSecrets(sub, options.now), {
    timestamp,
    method: "POST",
    path: url.pathname + url.search,
    body,
  });
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), options.timeoutMs);
  try {
    const response = await options.fetch(url.toString(), {
      method: "POST",
      redirect: "manual",
      signal: controller.signal,
      body,
      headers: {
        "content-type": "application/json",
        "user-agent": USER_AGENT,
        "x-oc-timestamp": String(timestamp),
        "x-oc-signature": signature,
        "x-oc-delivery-id": row.id,
        "x-oc-delivery-attempt": `${row.id}:${row.attempt}`,
        "x-oc-event-id": row.eventId,
        "x-oc-event-type": row.eventType,
      },
    });
    const retryAfter = response.headers.get("retry-after");
    await response.body?.cancel().catch(() => undefined);
    return { kind: "response", status: response.status, retryAfter };
  } catch {
    return controller.signal.aborted ? { kind: "timeout" } : { kind: "transport" };
  } finally {
    clearTimeout(timer);
  }
}
