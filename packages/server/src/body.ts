import { HttpError, invalidInput } from "./errors.ts";

/** Default request body limit: 1 MiB. */
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

// Deeply nested JSON parses fine but later recursive validators could overflow the stack;
// no legitimate request nests anywhere near this deep.
const MAX_DEPTH = 64;

export const tooLarge = (max: number): HttpError =>
  new HttpError("body_too_large", `Request body is larger than ${max} bytes`);

/** Rejects a declared Content-Length over `max` before anything is read. */
export function checkContentLength(request: Request, max: number): void {
  const declared = request.headers.get("content-length");
  if (declared !== null && /^\d+$/.test(declared) && Number(declared) > max) throw tooLarge(max);
}

/** Reads the body, counting bytes as they arrive: Content-Length may be absent or wrong. */
export async function readLimited(request: Request, max: number): Promise<Uint8Array> {
  checkContentLength(request, max);
  if (!request.body) return new Uint8Array(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    let chunk: Awaited<ReturnType<typeof reader.read>>;
    try {
      chunk = await reader.read();
    } catch {
      // The client went away or sent less than it declared: its fault, not the server's.
      throw new HttpError("invalid_body", "Request body could not be read to its end");
    }
    const { done, value } = chunk;
    if (done) break;
    total += value.byteLength;
    if (total > max) {
      // Not cancel(): in node:http that destroys the socket before the 413 can be sent.
      reader.releaseLock();
      throw tooLarge(max);
    }
    chunks.push(value);
  }
  const out = new Uint8Array(total);
  let offset = 0;
  for (const c of chunks) {
    out.set(c, offset);
    offset += c.byteLength;
  }
  return out;
}

/** The body as a JSON object: `invalid_json` when it is not JSON, `invalid_input` when not an object. */
export async function readJsonObject(
  request: Request,
  max: number,
): Promise<Record<string, unknown>> {
  const bytes = await readLimited(request, max);
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch {
    throw new HttpError("invalid_json", "Request body is not valid UTF-8 JSON");
  }
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw invalidInput("body", "must be a JSON object");
  if (depthOf(value) > MAX_DEPTH) throw invalidInput("body", `nests deeper than ${MAX_DEPTH}`);
  return value as Record<string, unknown>;
}

/** Nesting depth, computed iteratively so that measuring it cannot overflow the stack. */
function depthOf(root: unknown): number {
  let max = 0;
  const stack: Array<[unknown, number]> = [[root, 1]];
  while (stack.length) {
    const [value, depth] = stack.pop()!;
    if (typeof value !== "object" || value === null) continue;
    if (depth > max) max = depth;
    if (max > MAX_DEPTH) return max;
    for (const child of Object.values(value)) stack.push([child, depth + 1]);
  }
  return max;
}

/** Fails with `invalid_input` naming the first field not in `allowed`. */
export function onlyFields(body: Record<string, unknown>, allowed: readonly string[]): void {
  for (const key of Object.keys(body)) {
    if (!allowed.includes(key))
      throw invalidInput(key, `is not a field of this request (allowed: ${allowed.join(", ")})`);
  }
}
