// The UsageStore port over SQL, once for both stores. `usage_steps` holds one row per
// `usage.recorded` event, inserted by a trigger on `events` (each store's migration), so the row
// commits with its event and the engine's write path is unchanged; a roll-up is one grouped
// query over a time index, joined to `sessions` for the project, agent and labels.
import type {
  UsageGroup,
  UsageGroupBy,
  UsageQuery,
  UsageRollUp,
  UsageStore,
  UsageTotals,
} from "@opencomputer/runtime";
import type { SqlExecutor } from "./trigger-store.ts";

/** `usage_steps` and its index; the trigger that fills it is each store's own (its SQL dialect). */
export function usageTableDdl(text: string, int: string, real: string): string {
  return `
CREATE TABLE usage_steps (
  session_id ${text} NOT NULL,
  seq ${int} NOT NULL,
  turn_id ${text},
  timestamp ${text} NOT NULL,
  provider ${text} NOT NULL,
  model ${text} NOT NULL,
  input_tokens ${int} NOT NULL,
  output_tokens ${int} NOT NULL,
  cache_read_tokens ${int} NOT NULL,
  cache_write_tokens ${int} NOT NULL,
  cost_usd ${real},
  PRIMARY KEY (session_id, seq)
);
CREATE INDEX usage_steps_by_time ON usage_steps (timestamp);
`;
}

/** The columns a trigger inserts, in order. */
export const USAGE_COLUMNS =
  "session_id, seq, turn_id, timestamp, provider, model, input_tokens, output_tokens, " +
  "cache_read_tokens, cache_write_tokens, cost_usd";

/** How a store's SQL reads one label's value of the joined session `s`. */
export interface UsageDialect {
  /** An expression with one `?` placeholder for `labelParam(key)`. */
  labelValue: string;
  labelParam(key: string): string;
}

const SUMS = `count(*) AS steps,
  sum(u.input_tokens) AS input_tokens,
  sum(u.output_tokens) AS output_tokens,
  sum(u.cache_read_tokens) AS cache_read_tokens,
  sum(u.cache_write_tokens) AS cache_write_tokens,
  sum(u.cost_usd) AS cost_usd,
  sum(CASE WHEN u.cost_usd IS NULL THEN 1 ELSE 0 END) AS unpriced_steps`;

// Costs are priced to a millionth of a cent (models/prices.ts); summing floats must not show more.
const cents = (usd: number) => Math.round(usd * 1e8) / 1e8;

function totalsOf(row: Record<string, unknown>): UsageTotals {
  const n = (column: string) => Number(row[column] ?? 0);
  return {
    steps: n("steps"),
    inputTokens: n("input_tokens"),
    outputTokens: n("output_tokens"),
    cacheReadTokens: n("cache_read_tokens"),
    cacheWriteTokens: n("cache_write_tokens"),
    costUsd: cents(n("cost_usd")),
    unpricedSteps: n("unpriced_steps"),
  };
}

const EMPTY: UsageTotals = totalsOf({});

function keyOf(groupBy: UsageGroupBy, dialect: UsageDialect): { sql: string; params: unknown[] } {
  if (groupBy.by === "agent") return { sql: "s.agent_id", params: [] };
  if (groupBy.by === "session") return { sql: "u.session_id", params: [] };
  return { sql: dialect.labelValue, params: [dialect.labelParam(groupBy.key)] };
}

function add(a: UsageTotals, b: UsageTotals): UsageTotals {
  return {
    steps: a.steps + b.steps,
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    cacheReadTokens: a.cacheReadTokens + b.cacheReadTokens,
    cacheWriteTokens: a.cacheWriteTokens + b.cacheWriteTokens,
    costUsd: cents(a.costUsd + b.costUsd),
    unpricedSteps: a.unpricedSteps + b.unpricedSteps,
  };
}

export class SqlUsageStore implements UsageStore {
  constructor(
    private readonly sql: SqlExecutor,
    private readonly dialect: UsageDialect,
  ) {}

  async rollUp(q: UsageQuery): Promise<UsageRollUp> {
    const where = `FROM usage_steps u JOIN sessions s ON s.id = u.session_id
      WHERE s.project_id = ? AND u.timestamp >= ? AND u.timestamp < ?`;
    const window: unknown[] = [q.projectId, q.from, q.to];
    let filter = "";
    if (q.label) {
      filter = ` AND ${this.dialect.labelValue} = ?`;
      window.push(this.dialect.labelParam(q.label.key), q.label.value);
    }
    if (!q.groupBy) {
      const rows = await this.sql.all(`SELECT ${SUMS} ${where}${filter}`, window);
      return { total: rows[0] ? totalsOf(rows[0]) : EMPTY, groups: [] };
    }
    const key = keyOf(q.groupBy, this.dialect);
    const rows = await this.sql.all(
      `SELECT ${key.sql} AS group_key, ${SUMS} ${where}${filter} GROUP BY 1`,
      [...key.params, ...window],
    );
    const groups: UsageGroup[] = rows.map((row) => ({
      key: row.group_key === null || row.group_key === undefined ? null : String(row.group_key),
      ...totalsOf(row),
    }));
    // Byte order, the missing label last: the same on both databases whatever their collation.
    groups.sort((a, b) =>
      a.key === b.key ? 0 : a.key === null ? 1 : b.key === null ? -1 : a.key < b.key ? -1 : 1,
    );
    return { total: groups.reduce<UsageTotals>((sum, g) => add(sum, g), EMPTY), groups };
  }
}
