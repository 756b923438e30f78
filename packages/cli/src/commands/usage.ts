// `opencomputer usage`: the project's model usage and cost over a window, per agent, session or
// label value. From a server (GET /usage) when one is configured or linked, else from a store:
// `--store` (a SQLite file or postgres://…), or the project's embedded `.opencomputer/data.db`.

import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { OpenComputerError } from "@opencomputer/agent";
import type { UsageReport } from "@opencomputer/protocol";
import { InputError, parseUsageWindow } from "@opencomputer/runtime";
import { json, noExtra, out, parse } from "../args.ts";
import { ApiClient } from "../client.ts";
import { openStore } from "../store-url.ts";

export const USAGE_USAGE = `opencomputer usage [--from DATE] [--to DATE] [--group-by agent|session|label.<key>]
                   [--store <file.db|postgres://...> [--project P]] [--dir DIR] [--json]
  e.g.  opencomputer usage --from 2026-03-01 --group-by label.customer`;

export async function usageCommand(argv: string[]): Promise<number> {
  const options = {
    from: { type: "string" },
    to: { type: "string" },
    "group-by": { type: "string" },
    store: { type: "string" },
    project: { type: "string" },
    dir: { type: "string" },
    json: { type: "boolean" },
  } as const;
  const { values, positionals } = parse(argv, options, USAGE_USAGE);
  noExtra(positionals, 0, USAGE_USAGE);
  const query = { from: values.from, to: values.to, groupBy: values["group-by"] };
  const report = await readReport(query, values.store, values.project, resolve(values.dir ?? "."));
  if (values.json) json(report);
  else for (const line of usageTable(report)) out(line);
  return 0;
}

type Query = { from?: string | undefined; to?: string | undefined; groupBy?: string | undefined };

async function readReport(
  query: Query,
  storeUrl: string | undefined,
  project: string | undefined,
  dir: string,
): Promise<UsageReport> {
  const embedded = join(dir, ".opencomputer", "data.db");
  if (storeUrl === undefined) {
    let api: ApiClient | undefined;
    try {
      api = ApiClient.resolve(dir);
    } catch (error) {
      if (!existsSync(embedded)) throw error;
    }
    if (api) {
      const params = new URLSearchParams();
      if (query.from !== undefined) params.set("from", query.from);
      if (query.to !== undefined) params.set("to", query.to);
      if (query.groupBy !== undefined) params.set("groupBy", query.groupBy);
      const search = params.size > 0 ? `?${params}` : "";
      return api.request<UsageReport>("GET", `/usage${search}`);
    }
  }
  let window: ReturnType<typeof parseUsageWindow>;
  try {
    window = parseUsageWindow(query);
  } catch (error) {
    if (!(error instanceof InputError)) throw error;
    const flag = error.details.path === "groupBy" ? "group-by" : String(error.details.path);
    throw new OpenComputerError(
      "usage",
      `--${flag}${error.message.slice(error.message.indexOf(":"))}`,
    );
  }
  const opened = await openStore(storeUrl ?? embedded);
  try {
    const { total, groups } = await opened.usage.rollUp({
      projectId: project ?? "default",
      from: window.from,
      to: window.to,
      ...(window.groupBy ? { groupBy: window.groupBy } : {}),
    });
    return {
      from: window.from,
      to: window.to,
      ...(window.groupByName ? { groupBy: window.groupByName } : {}),
      total,
      groups,
    };
  } finally {
    await opened.close();
  }
}

const usd = (value: number) => `$${value.toFixed(value !== 0 && value < 0.01 ? 6 : 2)}`;

/** The report as aligned columns, a total row, and a line about steps without a price. */
export function usageTable(report: UsageReport): string[] {
  const head = [
    report.groupBy ?? "",
    "steps",
    "input",
    "output",
    "cache read",
    "cache write",
    "cost",
  ];
  const row = (key: string, t: UsageReport["total"]) => [
    key,
    String(t.steps),
    String(t.inputTokens),
    String(t.outputTokens),
    String(t.cacheReadTokens),
    String(t.cacheWriteTokens),
    usd(t.costUsd) + (t.unpricedSteps > 0 ? "*" : ""),
  ];
  const rows = [
    head,
    ...report.groups.map((g) => row(g.key ?? "(none)", g)),
    row("total", report.total),
  ];
  const widths = head.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  const lines = [`Usage from ${report.from} to ${report.to}`];
  for (const r of rows)
    lines.push(
      r
        .map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!)))
        .join("  ")
        .trimEnd(),
    );
  if (report.total.unpricedSteps > 0) {
    lines.push(
      `* ${report.total.unpricedSteps} step(s) used a model with no price; their cost is not in the total. Add the model to opencomputer/prices.json.`,
    );
  }
  return lines;
}
