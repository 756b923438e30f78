// `GET /usage`: the project's model usage over a time window, in total and per group, from the
// UsageStore (store-sqlite / store-postgres). Answers 404 when the server was given no usage store.

import { InputError, parseUsageWindow, type UsageStore } from "@opencomputer/runtime";
import { invalidQuery } from "../errors.ts";
import { checkQuery } from "../query.ts";
import { json } from "../respond.ts";
import type { Router } from "../router.ts";

export function usageRoutes(router: Router, usage: UsageStore, now: () => number = Date.now): void {
  router.add("GET", "/usage", async (_request, _params, url, principal) => {
    checkQuery(url, ["from", "to", "groupBy"]);
    let window: ReturnType<typeof parseUsageWindow>;
    try {
      window = parseUsageWindow(
        {
          from: url.searchParams.get("from"),
          to: url.searchParams.get("to"),
          groupBy: url.searchParams.get("groupBy"),
        },
        now(),
      );
    } catch (error) {
      if (error instanceof InputError)
        throw invalidQuery(String(error.details.path), error.message.replace(/^[^:]+: /, ""));
      throw error;
    }
    const { total, groups } = await usage.rollUp({
      projectId: principal.projectId,
      from: window.from,
      to: window.to,
      ...(window.groupBy ? { groupBy: window.groupBy } : {}),
    });
    return json(200, {
      from: window.from,
      to: window.to,
      ...(window.groupByName ? { groupBy: window.groupByName } : {}),
      total,
      groups,
    });
  });
}
