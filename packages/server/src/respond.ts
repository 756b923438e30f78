import { describeError, INTERNAL_ERROR } from "./errors.ts";

const JSON_TYPE = "application/json; charset=utf-8";

export function json(
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": JSON_TYPE, "cache-control": "no-store", ...headers },
  });
}

/** Maps any thrown value to a response; unexpected ones are logged, never echoed. */
export function errorResponse(error: unknown, log: (error: unknown) => void): Response {
  const known = describeError(error);
  if (known) return json(known.status, known.body);
  log(error);
  return json(500, INTERNAL_ERROR);
}
