// Run history as the API pages it: newest first, an opaque cursor naming the last run shown.
import type { ScheduleRun } from "@opencomputer/protocol";
import {
  InputError,
  type ScheduleRunQuery,
  type ScheduleRunRow,
  type TriggerStore,
} from "@opencomputer/runtime";

export interface RunPage {
  runs: ScheduleRun[];
  nextCursor: string | null;
}

/** The API record: the claim is the store's business. */
export function publicRun(row: ScheduleRunRow): ScheduleRun {
  const { claimedBy: _holder, claimExpiresAt: _until, ...run } = row;
  return run;
}

const encode = (run: ScheduleRunRow) =>
  Buffer.from(JSON.stringify([run.intendedAt, run.id])).toString("base64url");

function decode(cursor: string): { intendedAt: string; id: string } {
  try {
    const [intendedAt, id] = JSON.parse(Buffer.from(cursor, "base64url").toString()) as unknown[];
    if (typeof intendedAt === "string" && typeof id === "string") return { intendedAt, id };
  } catch {}
  throw new InputError("invalid_input", "cursor: is not a cursor this API returned", {
    path: "cursor",
  });
}

export async function listRuns(
  store: TriggerStore,
  query: Omit<ScheduleRunQuery, "before" | "limit"> & { cursor?: string; limit?: number },
): Promise<RunPage> {
  const limit = query.limit ?? 50;
  const { cursor, ...rest } = query;
  const rows = await store.listScheduleRuns({
    ...rest,
    limit: limit + 1,
    ...(cursor !== undefined ? { before: decode(cursor) } : {}),
  });
  const page = rows.slice(0, limit);
  return {
    runs: page.map(publicRun),
    nextCursor: rows.length > limit ? encode(page[page.length - 1]!) : null,
  };
}
