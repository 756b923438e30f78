// The delivery signature: HMAC-SHA-256 under the subscription's signing secret over
// `<timestamp>.<METHOD>.<path>.<body>`, sent as `x-oc-signature: v1=<hex>` (two entries, comma
// separated, while a rotated secret is still honoured). Web Crypto only, so the same code signs
// in the platform and verifies in Node, browsers and edge runtimes.

const encoder = new TextEncoder();

/** How far a delivery's timestamp may be from the receiver's clock (5 minutes). */
export const SIGNATURE_TOLERANCE_SECONDS = 300;

async function hmacHex(secret: string, input: string): Promise<string> {
  const key = await crypto.subtle.importKey(
    "raw",
    encoder.encode(secret),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  const digest = new Uint8Array(await crypto.subtle.sign("HMAC", key, encoder.encode(input)));
  let hex = "";
  for (const byte of digest) hex += byte.toString(16).padStart(2, "0");
  return hex;
}

export interface SignatureInput {
  /** Unix seconds, as sent in `x-oc-timestamp`. */
  timestamp: number;
  method: string;
  /** The destination's pathname plus query string (`/oc/events?tenant=acme`), never the host. */
  path: string;
  /** The raw body, exactly as sent. */
  body: string;
}

/** The `x-oc-signature` value: one `v1=` entry per secret (current first). */
export async function signEventDelivery(
  secrets: readonly string[],
  input: SignatureInput,
): Promise<string> {
  const message = `${input.timestamp}.${input.method.toUpperCase()}.${input.path}.${input.body}`;
  const entries = await Promise.all(secrets.map(async (s) => `v1=${await hmacHex(s, message)}`));
  return entries.join(",");
}

/** Compares without stopping at the first difference. */
function sameText(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

export interface VerifyOptions {
  /** The signing secret, or several (current and previous) during a rotation. */
  secret: string | readonly string[];
  headers: Headers | Record<string, string | undefined>;
  method: string;
  path: string;
  /** The raw body as received; verify before parsing. */
  body: string;
  /** Unix seconds now (default the clock); tests pass their own. */
  now?: number;
  toleranceSeconds?: number;
}

/** A header by name, whatever its case in a plain record (as frameworks hand them over). */
function header(headers: VerifyOptions["headers"], name: string): string | null {
  if (headers instanceof Headers) return headers.get(name);
  for (const [key, value] of Object.entries(headers))
    if (key.toLowerCase() === name && value !== undefined) return value;
  return null;
}

/**
 * True when the timestamp is within the tolerance of `now` and one `v1=` entry of
 * `x-oc-signature` matches under one of the secrets.
 */
export async function verifyEventDelivery(options: VerifyOptions): Promise<boolean> {
  const stamp = header(options.headers, "x-oc-timestamp");
  const signature = header(options.headers, "x-oc-signature");
  if (stamp === null || signature === null || !/^\d{1,12}$/.test(stamp)) return false;
  const timestamp = Number(stamp);
  const now = options.now ?? Math.floor(Date.now() / 1000);
  if (Math.abs(now - timestamp) > (options.toleranceSeconds ?? SIGNATURE_TOLERANCE_SECONDS))
    return false;
  const given = signature.split(",").map((s) => s.trim());
  const secrets = typeof options.secret === "string" ? [options.secret] : options.secret;
  for (const secret of secrets) {
    if (secret === "") continue;
    const expected = await signEventDelivery([secret], { ...options, timestamp });
    let match = false;
    for (const entry of given) match = sameText(entry, expected) || match;
    if (match) return true;
  }
  return false;
}
