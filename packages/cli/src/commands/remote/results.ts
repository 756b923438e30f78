import { OpenComputerError } from "@opencomputer/agent";
import { integer, json, need, noExtra, out, parse, short } from "../../args.ts";
import { type ApiClient, seg } from "../../client.ts";

export const RESULTS_USAGE = `opencomputer results list <sessionId> [--turn <turnId>] [--limit N] [--cursor C] [--json]
  opencomputer results get <sessionId> <resultId>`;

interface ResultRecord {
  resultId: string;
  turnId: string;
  resultTool: string;
  data: unknown;
  createdAt: string;
}

export async function resultsRemote(client: () => ApiClient, argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === "list") {
    const usage =
      "opencomputer results list <sessionId> [--turn <turnId>] [--limit N] [--cursor C] [--json]";
    const { values, positionals } = parse(
      rest,
      {
        turn: { type: "string" },
        limit: { type: "string" },
        cursor: { type: "string" },
        json: { type: "boolean" },
      },
      usage,
    );
    const id = need(positionals, 0, "the session id", usage);
    noExtra(positionals, 1, usage);
    const limit = integer(values.limit, "limit", 1);
    const base = values.turn
      ? `/sessions/${seg(id)}/turns/${seg(values.turn)}/results`
      : `/sessions/${seg(id)}/results`;
    const api = client();
    const page = (cursor: string | undefined, size: number) =>
      api.get<{ results: ResultRecord[]; nextCursor: string | null }>(
        `${base}?limit=${size}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
      );
    // With --limit or --cursor, one page and where the next starts; else every result.
    const paged = limit !== undefined || values.cursor !== undefined;
    const results: ResultRecord[] = [];
    let next: string | null = values.cursor ?? null;
    do {
      const got = await page(next ?? undefined, paged ? (limit ?? 50) : 200);
      results.push(...got.results);
      next = got.nextCursor;
    } while (next && !paged);
    if (values.json) {
      json(paged ? { results, nextCursor: next } : { results });
      return 0;
    }
    if (results.length === 0) out("no results");
    for (const r of results)
      out(`${r.resultId}  turn ${r.turnId}  ${r.resultTool}  ${r.createdAt}  ${short(r.data)}`);
    if (paged && next) out(`(more: --cursor ${next})`);
    return 0;
  }
  if (sub === "get") {
    const usage = "opencomputer results get <sessionId> <resultId>";
    const { positionals } = parse(rest, { json: { type: "boolean" } });
    const id = need(positionals, 0, "the session id", usage);
    const resultId = need(positionals, 1, "the result id", usage);
    noExtra(positionals, 2, usage);
    const record = await client().get<ResultRecord>(
      `/sessions/${seg(id)}/results/${seg(resultId)}`,
    );
    out(JSON.stringify(record, null, 2));
    return 0;
  }
  throw new OpenComputerError(
    "usage",
    `Unknown subcommand "results ${sub ?? ""}". Usage:\n  ${RESULTS_USAGE}`,
  );
}
