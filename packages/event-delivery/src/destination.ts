// Where a subscription may post: an absolute https:// URL without credentials or fragment. Plain
// http is accepted only for a loopback host, and only when the service is configured for local
// development and tests (`allowLoopbackHttp`).
import { OpenComputerError } from "@opencomputer/agent";

export class EventSubscriptionError extends OpenComputerError {}

const MAX_URL_LENGTH = 2048;
const LOOPBACK = new Set(["localhost", "127.0.0.1", "[::1]"]);

export function isLoopback(url: URL): boolean {
  return LOOPBACK.has(url.hostname) || /^127\.\d+\.\d+\.\d+$/.test(url.hostname);
}

/** The checked URL; `invalid_destination` naming `destination.url` otherwise. */
export function checkDestination(raw: unknown, allowLoopbackHttp: boolean): string {
  const fail = (why: string): never => {
    throw new EventSubscriptionError("invalid_event_subscription", `destination.url: ${why}`, {
      path: "destination.url",
    });
  };
  if (typeof raw !== "object" || raw === null || Array.isArray(raw))
    throw new EventSubscriptionError(
      "invalid_event_subscription",
      'destination: must be { "type": "https", "url": "https://…" }',
      { path: "destination" },
    );
  const { type, url, ...rest } = raw as Record<string, unknown>;
  const extra = Object.keys(rest)[0];
  if (extra !== undefined)
    throw new EventSubscriptionError(
      "invalid_event_subscription",
      `destination.${extra}: unknown field`,
      {
        path: `destination.${extra}`,
      },
    );
  if (type !== "https")
    throw new EventSubscriptionError(
      "invalid_event_subscription",
      'destination.type: must be "https"',
      {
        path: "destination.type",
      },
    );
  if (typeof url !== "string" || url === "") return fail("must be an absolute https:// URL");
  if (url.length > MAX_URL_LENGTH) return fail(`must be at most ${MAX_URL_LENGTH} characters`);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return fail("is not an absolute URL");
  }
  if (parsed.username !== "" || parsed.password !== "") fail("must not carry credentials");
  if (parsed.hash !== "" || url.includes("#")) fail("must not have a fragment");
  if (parsed.protocol === "http:" && !(allowLoopbackHttp && isLoopback(parsed)))
    fail(
      allowLoopbackHttp
        ? "plain http is allowed only for a loopback host"
        : "must use https:// (plain http is allowed only for loopback in development)",
    );
  else if (parsed.protocol !== "https:" && parsed.protocol !== "http:") fail("must use https://");
  return parsed.toString();
}
