// The TriggerStore port over SQL, once for both stores: every operation is one statement (an
// INSERT … ON CONFLICT DO NOTHING, or an UPDATE guarded by the state it expects), so each is
// atomic on its own in SQLite and PostgreSQL alike, and two processes racing for one schedule
// occurrence or one webhook delivery are decided by a unique index, not by timing.
import type {
  NewScheduleRun,
  NewWebhookRequest,
  ScheduleKey,
  ScheduleRunChange,
  ScheduleRunQuery,
  ScheduleRunRow,
  TriggerStore,
  WebhookRequestRow,
  WebhookRow,
} from "@opencomputer/runtime";
import {
  type Row,
  SCHEDULE_RUN_COLUMNS,
  scheduleRunFromRow,
  WEBHOOK_COLUMNS,
  WEBHOOK_REQUEST_COLUMNS,
  webhookFromRow,
  webhookRequestFromRow,
} from "./trigger-rows.ts";

/** How a store runs one statement written with `?` placeholders. */
export interface SqlExecutor {
  all(sql: string, params: readonly unknown[]): Promise<Row[]>;
  /** Returns how many rows changed. */
  run(sql: string, params: readonly unknown[]): Promise<number>;
}

const KEY_WHERE = "project_id = ? AND environment = ? AND agent_id = ? AND schedule_id = ?";
const keyParams = (k: ScheduleKey) => [k.projectId, k.environment, k.agentId, k.scheduleId];
const OPEN = "('claimed', 'started')";

/** `column = ?` for every pair whose value is given, with the values in order. */
function assignments(pairs: ReadonlyArray<readonly [string, unknown]>) {
  const given = pairs.filter(([, value]) => value !== undefined);
  return { sql: given.map(([column]) => `${column} = ?`), params: given.map(([, v]) => v) };
}

/** `column = ?` conditions for the filters that are given. */
const conditions = assignments;

export class SqlTriggerStore implements TriggerStore {
  constructor(private readonly sql: SqlExecutor) {}

  async insertScheduleRun(run: NewScheduleRun) {
    const rows = await this.sql.all(
      `INSERT INTO schedule_runs (${SCHEDULE_RUN_COLUMNS})
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, NULL, NULL, ?, ?, ?, ?, ?)
       ON CONFLICT DO NOTHING RETURNING ${SCHEDULE_RUN_COLUMNS}`,
      [
        run.id,
        ...keyParams(run),
        run.intendedAt,
        run.timezone,
        run.manual ? 1 : 0,
        run.status,
        run.deploymentId,
        run.error,
        run.claimedBy,
        run.claimExpiresAt,
        run.createdAt,
        run.createdAt,
      ],
    );
    if (rows[0]) return { run: scheduleRunFromRow(rows[0]), created: true };
    const existing = await this.sql.all(
      `SELECT ${SCHEDULE_RUN_COLUMNS} FROM schedule_runs
       WHERE ${KEY_WHERE} AND intended_at = ? AND manual = 0`,
      [...keyParams(run), run.intendedAt],
    );
    if (!existing[0]) throw new Error(`schedule run ${run.id} was neither inserted nor found`);
    return { run: scheduleRunFromRow(existing[0]), created: false };
  }

  async getScheduleRun(id: string) {
    const rows = await this.sql.all(
      `SELECT ${SCHEDULE_RUN_COLUMNS} FROM schedule_runs WHERE id = ?`,
      [id],
    );
    return rows[0] ? scheduleRunFromRow(rows[0]) : null;
  }

  async listScheduleRuns(q: ScheduleRunQuery) {
    const filter = conditions([
      ["project_id", q.projectId],
      ["environment", q.environment],
      ["agent_id", q.agentId],
      ["schedule_id", q.scheduleId],
      ["status", q.status],
    ]);
    const where = filter.sql;
    const params = filter.params;
    if (q.before) {
      where.push("(intended_at < ? OR (intended_at = ? AND id < ?))");
      params.push(q.before.intendedAt, q.before.intendedAt, q.before.id);
    }
    const rows = await this.sql.all(
      `SELECT ${SCHEDULE_RUN_COLUMNS} FROM schedule_runs WHERE ${where.join(" AND ")}
       ORDER BY intended_at DESC, id DESC LIMIT ?`,
      [...params, q.limit],
    );
    return rows.map(scheduleRunFromRow);
  }

  async openScheduleRuns(key: ScheduleKey) {
    const rows = await this.sql.all(
      `SELECT ${SCHEDULE_RUN_COLUMNS} FROM schedule_runs
       WHERE ${KEY_WHERE} AND status IN ${OPEN} ORDER BY intended_at, id`,
      keyParams(key),
    );
    return rows.map(scheduleRunFromRow);
  }

  async lapsedScheduleClaims(now: number, limit: number) {
    const rows = await this.sql.all(
      `SELECT ${SCHEDULE_RUN_COLUMNS} FROM schedule_runs
       WHERE status = 'claimed' AND claim_expires_at < ? ORDER BY intended_at, id LIMIT ?`,
      [now, limit],
    );
    return rows.map(scheduleRunFromRow);
  }

  async startedScheduleRuns(limit: number) {
    const rows = await this.sql.all(
      `SELECT ${SCHEDULE_RUN_COLUMNS} FROM schedule_runs
       WHERE status = 'started' ORDER BY intended_at, id LIMIT ?`,
      [limit],
    );
    return rows.map(scheduleRunFromRow);
  }

  async reclaimScheduleRun(id: string, holder: string, now: number, expiresAt: number) {
    const rows = await this.sql.all(
      `UPDATE schedule_runs SET claimed_by = ?, claim_expires_at = ?, attempt = attempt + 1
       WHERE id = ? AND status = 'claimed' AND claim_expires_at < ?
       RETURNING ${SCHEDULE_RUN_COLUMNS}`,
      [holder, expiresAt, id, now],
    );
    return rows[0] ? scheduleRunFromRow(rows[0]) : null;
  }

  async updateScheduleRun(
    id: string,
    expect: readonly ScheduleRunRow["status"][],
    change: ScheduleRunChange,
  ) {
    const set = assignments([
      ["status", change.status],
      ["updated_at", change.updatedAt],
      ["session_id", change.sessionId],
      ["turn_id", change.turnId],
      ["error", change.error],
    ]);
    const marks = expect.map(() => "?").join(", ");
    const changed = await this.sql.run(
      `UPDATE schedule_runs SET ${set.sql.join(", ")}, claimed_by = NULL, claim_expires_at = NULL
       WHERE id = ? AND status IN (${marks})`,
      [...set.params, id, ...expect],
    );
    return changed > 0;
  }

  async scheduleCursor(key: ScheduleKey) {
    const rows = await this.sql.all(
      `SELECT cursor_at FROM schedule_cursors WHERE ${KEY_WHERE}`,
      keyParams(key),
    );
    return rows[0] ? String(rows[0].cursor_at) : null;
  }

  async advanceScheduleCursor(key: ScheduleKey, to: string) {
    const changed = await this.sql.run(
      `INSERT INTO schedule_cursors (project_id, environment, agent_id, schedule_id, cursor_at)
       VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (project_id, environment, agent_id, schedule_id)
       DO UPDATE SET cursor_at = excluded.cursor_at
       WHERE schedule_cursors.cursor_at < excluded.cursor_at`,
      [...keyParams(key), to],
    );
    return changed > 0;
  }

  async createWebhook(w: WebhookRow) {
    await this.sql.run(
      `INSERT INTO webhooks (${WEBHOOK_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        w.id,
        w.projectId,
        w.environment,
        w.agentId,
        w.name,
        w.enabled ? 1 : 0,
        w.tokenHash,
        w.createdAt,
        w.updatedAt,
        w.tokenRotatedAt,
      ],
    );
  }

  async getWebhook(id: string) {
    const rows = await this.sql.all(`SELECT ${WEBHOOK_COLUMNS} FROM webhooks WHERE id = ?`, [id]);
    return rows[0] ? webhookFromRow(rows[0]) : null;
  }

  async listWebhooks(filter: { projectId: string; agentId?: string; environment?: string }) {
    const where = conditions([
      ["project_id", filter.projectId],
      ["agent_id", filter.agentId],
      ["environment", filter.environment],
    ]);
    const rows = await this.sql.all(
      `SELECT ${WEBHOOK_COLUMNS} FROM webhooks WHERE ${where.sql.join(" AND ")}
       ORDER BY created_at, id`,
      where.params,
    );
    return rows.map(webhookFromRow);
  }

  async updateWebhook(
    id: string,
    change: Partial<Pick<WebhookRow, "enabled" | "tokenHash" | "tokenRotatedAt">> & {
      updatedAt: string;
    },
  ) {
    const set = assignments([
      ["updated_at", change.updatedAt],
      ["enabled", change.enabled === undefined ? undefined : change.enabled ? 1 : 0],
      ["token_hash", change.tokenHash],
      ["token_rotated_at", change.tokenRotatedAt],
    ]);
    const changed = await this.sql.run(`UPDATE webhooks SET ${set.sql.join(", ")} WHERE id = ?`, [
      ...set.params,
      id,
    ]);
    return changed > 0;
  }

  async deleteWebhook(id: string) {
    await this.sql.run("DELETE FROM webhook_requests WHERE webhook_id = ?", [id]);
    return (await this.sql.run("DELETE FROM webhooks WHERE id = ?", [id])) > 0;
  }

  async insertWebhookRequest(r: NewWebhookRequest) {
    const rows = await this.sql.all(
      `INSERT INTO webhook_requests (${WEBHOOK_REQUEST_COLUMNS})
       VALUES (?, ?, ?, ?, 'pending', NULL, NULL, NULL, 0, ?, ?, ?, ?)
       ON CONFLICT DO NOTHING RETURNING ${WEBHOOK_REQUEST_COLUMNS}`,
      [
        r.id,
        r.webhookId,
        r.deliveryKey,
        JSON.stringify(r.input),
        r.claimedBy,
        r.claimExpiresAt,
        r.receivedAt,
        r.receivedAt,
      ],
    );
    if (rows[0]) return { request: webhookRequestFromRow(rows[0]), created: true };
    const existing = await this.sql.all(
      `SELECT ${WEBHOOK_REQUEST_COLUMNS} FROM webhook_requests
       WHERE webhook_id = ? AND delivery_key = ?`,
      [r.webhookId, r.deliveryKey],
    );
    if (!existing[0]) throw new Error(`webhook request ${r.id} was neither inserted nor found`);
    return { request: webhookRequestFromRow(existing[0]), created: false };
  }

  async getWebhookRequest(id: string) {
    const rows = await this.sql.all(
      `SELECT ${WEBHOOK_REQUEST_COLUMNS} FROM webhook_requests WHERE id = ?`,
      [id],
    );
    return rows[0] ? webhookRequestFromRow(rows[0]) : null;
  }

  async listWebhookRequests(webhookId: string, limit: number) {
    const rows = await this.sql.all(
      `SELECT ${WEBHOOK_REQUEST_COLUMNS} FROM webhook_requests WHERE webhook_id = ?
       ORDER BY received_at DESC, id DESC LIMIT ?`,
      [webhookId, limit],
    );
    return rows.map(webhookRequestFromRow);
  }

  async claimWebhookRequest(id: string, holder: string, now: number, expiresAt: number) {
    const rows = await this.sql.all(
      `UPDATE webhook_requests SET claimed_by = ?, claim_expires_at = ?, attempts = attempts + 1
       WHERE id = ? AND outcome = 'pending'
         AND (claimed_by IS NULL OR claimed_by = ? OR claim_expires_at < ?)
       RETURNING ${WEBHOOK_REQUEST_COLUMNS}`,
      [holder, expiresAt, id, holder, now],
    );
    return rows[0] ? webhookRequestFromRow(rows[0]) : null;
  }

  async settleWebhookRequest(
    id: string,
    change: {
      outcome: WebhookRequestRow["outcome"];
      sessionId?: string;
      turnId?: string;
      error?: string | null;
      updatedAt: string;
    },
  ) {
    const set = assignments([
      ["outcome", change.outcome],
      ["updated_at", change.updatedAt],
      ["session_id", change.sessionId],
      ["turn_id", change.turnId],
      ["error", change.error],
    ]);
    const changed = await this.sql.run(
      `UPDATE webhook_requests SET ${set.sql.join(", ")}, claimed_by = NULL,
       claim_expires_at = NULL WHERE id = ? AND outcome = 'pending'`,
      [...set.params, id],
    );
    return changed > 0;
  }

  async reopenWebhookRequest(id: string, updatedAt: string) {
    const changed = await this.sql.run(
      `UPDATE webhook_requests SET outcome = 'pending', error = NULL, attempts = 0,
       claimed_by = NULL, claim_expires_at = NULL, updated_at = ?
       WHERE id = ? AND outcome = 'failed'`,
      [updatedAt, id],
    );
    return changed > 0;
  }

  async lapsedWebhookRequests(now: number, limit: number) {
    const rows = await this.sql.all(
      `SELECT ${WEBHOOK_REQUEST_COLUMNS} FROM webhook_requests
       WHERE outcome = 'pending' AND claim_expires_at < ? ORDER BY received_at, id LIMIT ?`,
      [now, limit],
    );
    return rows.map(webhookRequestFromRow);
  }
}

/** The tables, in the dialect both stores accept (their migration lists append this). */
export function triggerTablesDdl(text: "TEXT" | 'text COLLATE "C"', int: "INTEGER" | "bigint") {
  return `
CREATE TABLE schedule_runs (
  id ${text} PRIMARY KEY,
  project_id ${text} NOT NULL,
  environment ${text} NOT NULL,
  agent_id ${text} NOT NULL,
  schedule_id ${text} NOT NULL,
  intended_at ${text} NOT NULL,
  timezone ${text} NOT NULL,
  manual ${int} NOT NULL,
  status ${text} NOT NULL,
  attempt ${int} NOT NULL,
  deployment_id ${text},
  session_id ${text},
  turn_id ${text},
  error ${text},
  claimed_by ${text},
  claim_expires_at ${int},
  created_at ${text} NOT NULL,
  updated_at ${text} NOT NULL
);
CREATE UNIQUE INDEX schedule_runs_occurrence
  ON schedule_runs (project_id, environment, agent_id, schedule_id, intended_at) WHERE manual = 0;
CREATE INDEX schedule_runs_by_schedule
  ON schedule_runs (project_id, environment, agent_id, schedule_id, intended_at DESC, id DESC);
CREATE INDEX schedule_runs_open ON schedule_runs (status, intended_at)
  WHERE status IN ('claimed', 'started');
CREATE TABLE schedule_cursors (
  project_id ${text} NOT NULL,
  environment ${text} NOT NULL,
  agent_id ${text} NOT NULL,
  schedule_id ${text} NOT NULL,
  cursor_at ${text} NOT NULL,
  PRIMARY KEY (project_id, environment, agent_id, schedule_id)
);
CREATE TABLE webhooks (
  id ${text} PRIMARY KEY,
  project_id ${text} NOT NULL,
  environment ${text} NOT NULL,
  agent_id ${text} NOT NULL,
  name ${text} NOT NULL,
  enabled ${int} NOT NULL,
  token_hash ${text} NOT NULL,
  created_at ${text} NOT NULL,
  updated_at ${text} NOT NULL,
  token_rotated_at ${text}
);
CREATE INDEX webhooks_by_project ON webhooks (project_id, created_at, id);
CREATE TABLE webhook_requests (
  id ${text} PRIMARY KEY,
  webhook_id ${text} NOT NULL,
  delivery_key ${text},
  input ${text} NOT NULL,
  outcome ${text} NOT NULL,
  session_id ${text},
  turn_id ${text},
  error ${text},
  attempts ${int} NOT NULL,
  claimed_by ${text},
  claim_expires_at ${int},
  received_at ${text} NOT NULL,
  updated_at ${text} NOT NULL
);
CREATE UNIQUE INDEX webhook_requests_delivery ON webhook_requests (webhook_id, delivery_key)
  WHERE delivery_key IS NOT NULL;
CREATE INDEX webhook_requests_by_webhook ON webhook_requests (webhook_id, received_at DESC, id DESC);
CREATE INDEX webhook_requests_pending ON webhook_requests (outcome, claim_expires_at)
  WHERE outcome = 'pending';
`;
}
