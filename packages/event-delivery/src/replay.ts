// What a replay call may select: by `deliveryIds`, by `sessionId` with an optional sequence
// range, or by a `since`/`until` window of event times; at most 100 deliveries per call.
import type { ReplaySelection } from "@opencomputer/runtime";
import { EventSubscriptionError } from "./destination.ts";

export const MAX_REPLAY = 100;

export type ReplayBody = Record<string, unknown>;

const fail = (path: string, why: string): never => {
  throw new EventSubscriptionError("invalid_input", `${path}: ${why}`, { path });
};

const isoTime = (value: unknown, path: string): string => {
  if (typeof value !== "string" || Number.isNaN(Date.parse(value)))
    return fail(path, "must be an ISO 8601 time");
  return new Date(value).toISOString();
};

const sequence = (value: unknown, path: string): number | undefined => {
  if (value === undefined) return undefined;
  if (!Number.isInteger(value) || (value as number) < 0)
    return fail(path, "must be a non-negative integer");
  return value as number;
};

export function checkReplay(body: ReplayBody): ReplaySelection {
  const modes = ["deliveryIds", "sessionId", "since"].filter((k) => body[k] !== undefined);
  if (modes.length !== 1)
    fail("deliveryIds", "select by exactly one of deliveryIds, sessionId or since");
  let limit = MAX_REPLAY;
  if (body.limit !== undefined) {
    if (
      !Number.isInteger(body.limit) ||
      (body.limit as number) < 1 ||
      (body.limit as number) > MAX_REPLAY
    )
      fail("limit", `must be an integer from 1 to ${MAX_REPLAY}`);
    limit = body.limit as number;
  }
  if (body.deliveryIds !== undefined) {
    const ids = body.deliveryIds;
    if (!Array.isArray(ids) || ids.length === 0 || ids.length > MAX_REPLAY)
      fail("deliveryIds", `must list 1 to ${MAX_REPLAY} delivery ids`);
    (ids as unknown[]).forEach((v, i) => {
      if (typeof v !== "string" || v.length === 0 || v.length > 128)
        fail(`deliveryIds[${i}]`, "must be a delivery id");
    });
    return { deliveryIds: ids as string[], limit };
  }
  if (body.sessionId !== undefined) {
    if (typeof body.sessionId !== "string" || body.sessionId.length > 128)
      fail("sessionId", "must be a session id");
    const fromSequence = sequence(body.fromSequence, "fromSequence");
    const toSequence = sequence(body.toSequence, "toSequence");
    return {
      sessionId: body.sessionId as string,
      ...(fromSequence !== undefined ? { fromSequence } : {}),
      ...(toSequence !== undefined ? { toSequence } : {}),
      limit,
    };
  }
  return {
    since: isoTime(body.since, "since"),
    ...(body.until !== undefined ? { until: isoTime(body.until, "until") } : {}),
    limit,
  };
}
