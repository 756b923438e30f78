import { invalidQuery } from "./errors.ts";

/**
 * Checks the query has only `allowed` names (or names starting with an allowed prefix), each
 * given once; unknown parameters are errors so a typo never silently widens a listing.
 */
export function checkQuery(
  url: URL,
  allowed: readonly string[],
  prefixes: readonly string[] = [],
): void {
  const seen = new Set<string>();
  for (const name of url.searchParams.keys()) {
    if (
      !allowed.includes(name) &&
      !prefixes.some((p) => name.startsWith(p) && name.length > p.length)
    )
      throw invalidQuery(name, "is not a query parameter of this route");
    if (seen.has(name)) throw invalidQuery(name, "is given more than once");
    seen.add(name);
  }
}

/** An integer parameter in [min, max]; `fallback` when absent. */
export function intParam(
  url: URL,
  name: string,
  min: number,
  max: number,
  fallback: number,
): number {
  const raw = url.searchParams.get(name);
  if (raw === null) return fallback;
  if (!/^\d{1,15}$/.test(raw) || Number(raw) < min || Number(raw) > max)
    throw invalidQuery(name, `must be an integer from ${min} to ${max}`);
  return Number(raw);
}
