import { check, type EventDelivery, eventDeliveryShape } from "@opencomputer/protocol";

/** The delivery body, or null when it is not JSON of the v1 delivery shape. */
export function parseEventDelivery(body: string): EventDelivery | null {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return null;
  }
  return check(eventDeliveryShape, value).length === 0 ? (value as EventDelivery) : null;
}
