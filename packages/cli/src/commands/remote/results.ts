import { OpenComputerError } from "@opencomputer/agent";
import { json, need, noExtra, out, parse, short } from "../../args.ts";
import { type ApiClient, seg } from "../../client.ts";

export const RESULTS_USAGE = `opencomputer results list <sessionId> [--turn <turnId>] [--json]
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
    const usage = "opencomputer results list <sessionId> [--turn <turnId>] [--json]";
    const { values, positionals } = parse(rest, {
      turn: { type: "string" },
      json: { type: "boolean" },
    });
    const id = need(positionals, 0, "the session id", usage);
    noExtra(positionals, 1, usage);
    const base = values.turn
      ? `/sessions/${seg(id)}/turns/${seg(values.turn)}/results`
      : `/sessions/${seg(id)}/results`;
    const api = client();
    const results: ResultRecord[] = [];
    let cursor: string | null = null;
    do {
      const qs: string = cursor ? `?limit=200&cursor=${encodeURIComponent(cursor)}` : "?limit=200";
      const page: { results: ResultRecord[]; nextCursor: string | null } = await api.get(
        `${base}${qs}`,
      );
      results.push(...page.results);
      cursor = page.nextCursor;
    } while (cursor);
    if (values.json) {
      json({ results });
      return 0;
    }
    if (results.length === 0) out("no results");
    for (const r of results)
      out(`${r.resultId}  turn ${r.turnId}  ${r.resultTool}  ${r.createdAt}  ${short(r.data)}`);
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
