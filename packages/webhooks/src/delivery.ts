// What a delivery becomes: its identity (the sender's delivery id header) and the turn input.
import { type JsonValue, OpenComputerError } from "@opencomputer/agent";

/** Senders' delivery id headers, the first present wins (Stripe and most use Idempotency-Key). */
export const DELIVERY_ID_HEADERS = [
  "idempotency-key",
  "request-id",
  "x-github-delivery",
  "svix-id",
] as const;

export const MAX_WEBHOOK_BODY_BYTES = 256 * 1024;

export class WebhookError extends OpenComputerError {}

export function deliveryKey(headers: Headers): string | null {
  for (const name of DELIVERY_ID_HEADERS) {
    const value = headers.get(name);
    if (value === null) continue;
    if (value.length === 0 || value.length > 256)
      throw new WebhookError("invalid_input", `${name}: must be 1 to 256 characters`, {
        path: name,
      });
    return `${name}:${value}`;
  }
  return null;
}

/**
 * `{text?, payload?}` from a JSON body: its `text` and `payload` when it has either, else the
 * whole body as `payload` (so a provider can post to the URL as is).
 */
export function inputOf(
  body: Uint8Array,
  webhookName: string,
): { text?: string; payload?: JsonValue } {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(body).toString("utf8"));
  } catch {
    throw new WebhookError("invalid_json", "The webhook body must be JSON (application/json)");
  }
  const fallback = `Webhook ${webhookName} invoked`;
  if (typeof value === "object" && value !== null && !Array.isArray(value)) {
    const o = value as Record<string, unknown>;
    if ("text" in o || "payload" in o) {
      if (o.text !== undefined && typeof o.text !== "string")
        throw new WebhookError("invalid_input", "text: must be a string", { path: "text" });
      return {
        text: (o.text as string | undefined) ?? fallback,
        ...(o.payload !== undefined ? { payload: o.payload as JsonValue } : {}),
      };
    }
  }
  return { text: fallback, payload: value as JsonValue };
}
