// The port for what starts sessions without a caller: schedule runs and webhooks. Separate from
// `Store` (sessions, turns, events) because none of it is part of a session's state; both SQL
// stores implement it on the same database (store-sqlite, store-postgres) and pass the
// conformance suite in @opencomputer/testkit/trigger-conformance.
//
// Times: `…At` strings are ISO 8601 in UTC (`Date#toISOString`, so they sort as text); claim
// deadlines are epoch milliseconds, compared with the caller's clock.

import type { ScheduleRun, WebhookRecord, WebhookRequest } from "@opencomputer/protocol";

/** A schedule in one environment: the unit occurrences are claimed for. */
export interface ScheduleKey {
  projectId: string;
  environment: string;
  agentId: string;
  scheduleId: string;
}

/** A run as stored: the API record plus the claim that a process holds while starting it. */
export interface ScheduleRunRow extends ScheduleRun {
  /** The process starting the run (while `claimed`). */
  claimedBy: string | null;
  /** When that claim lapses and another process may take the start over (epoch ms). */
  claimExpiresAt: number | null;
}

export interface NewScheduleRun extends ScheduleKey {
  id: string;
  intendedAt: string;
  timezone: string;
  manual: boolean;
  status: "claimed" | "skipped" | "missed";
  deploymentId: string | null;
  claimedBy: string | null;
  claimExpiresAt: number | null;
  error: string | null;
  createdAt: string;
}

/** What a status change may set; `expect` is the status the run must still have. */
export interface ScheduleRunChange {
  status: ScheduleRun["status"];
  sessionId?: string;
  turnId?: string;
  error?: string | null;
  updatedAt: string;
}

export interface ScheduleRunQuery extends Partial<Omit<ScheduleKey, "projectId">> {
  projectId: string;
  status?: ScheduleRun["status"];
  /** Runs whose (intendedAt, id) sorts before this cursor (newest first). */
  before?: { intendedAt: string; id: string };
  limit: number;
}

/** A webhook as stored: its token only as a SHA-256 digest. */
export interface WebhookRow extends Omit<WebhookRecord, "url"> {
  tokenHash: string;
}

export interface WebhookRequestRow extends WebhookRequest {
  /** Body and the input it became, kept until the start succeeded so a retry can start it. */
  input: unknown;
  attempts: number;
  claimedBy: string | null;
  claimExpiresAt: number | null;
}

export interface NewWebhookRequest {
  id: string;
  webhookId: string;
  deliveryKey: string | null;
  input: unknown;
  receivedAt: string;
  claimedBy: string;
  claimExpiresAt: number;
}

export interface TriggerStore {
  /**
   * Inserts the run unless one exists for the same schedule and `intendedAt` (manual runs are
   * never de-duplicated): `{ run, created }`, the existing run when `created` is false.
   */
  insertScheduleRun(run: NewScheduleRun): Promise<{ run: ScheduleRunRow; created: boolean }>;
  getScheduleRun(id: string): Promise<ScheduleRunRow | null>;
  /** Newest first by `(intendedAt, id)`. */
  listScheduleRuns(query: ScheduleRunQuery): Promise<ScheduleRunRow[]>;
  /** Runs of the schedule still `claimed` or `started`, oldest first. */
  openScheduleRuns(key: ScheduleKey): Promise<ScheduleRunRow[]>;
  /** Every run still `claimed` whose claim lapsed before `now`, oldest first, at most `limit`. */
  lapsedScheduleClaims(now: number, limit: number): Promise<ScheduleRunRow[]>;
  /** Every run still `started` (a session runs it), oldest first, at most `limit`. */
  startedScheduleRuns(limit: number): Promise<ScheduleRunRow[]>;
  /**
   * Takes over a `claimed` run whose claim lapsed before `now`: the new holder, `attempt` + 1.
   * Null when another process took it first, or it is no longer `claimed`.
   */
  reclaimScheduleRun(
    id: string,
    holder: string,
    now: number,
    expiresAt: number,
  ): Promise<ScheduleRunRow | null>;
  /** Compare-and-set on `status`: false (nothing written) when the run is not in `expect`. */
  updateScheduleRun(
    id: string,
    expect: readonly ScheduleRun["status"][],
    change: ScheduleRunChange,
  ): Promise<boolean>;
  /** The last intended time the schedulers have considered for the schedule, if any. */
  scheduleCursor(key: ScheduleKey): Promise<string | null>;
  /** Moves the cursor forward to `to` (never back); true when it moved. */
  advanceScheduleCursor(key: ScheduleKey, to: string): Promise<boolean>;

  createWebhook(row: WebhookRow): Promise<void>;
  getWebhook(id: string): Promise<WebhookRow | null>;
  listWebhooks(filter: {
    projectId: string;
    agentId?: string;
    environment?: string;
  }): Promise<WebhookRow[]>;
  /** Sets the given fields; false when there is no such webhook. */
  updateWebhook(
    id: string,
    change: Partial<Pick<WebhookRow, "enabled" | "tokenHash" | "tokenRotatedAt">> & {
      updatedAt: string;
    },
  ): Promise<boolean>;
  /** Deletes the webhook and its requests; false when there was none. */
  deleteWebhook(id: string): Promise<boolean>;
  /**
   * Records a request unless one with the same `(webhookId, deliveryKey)` exists: then that one
   * with `created: false` and nothing written.
   */
  insertWebhookRequest(
    request: NewWebhookRequest,
  ): Promise<{ request: WebhookRequestRow; created: boolean }>;
  getWebhookRequest(id: string): Promise<WebhookRequestRow | null>;
  /** Newest first. */
  listWebhookRequests(webhookId: string, limit: number): Promise<WebhookRequestRow[]>;
  /**
   * Takes the start of a `pending` request: when it is unclaimed or its claim lapsed before
   * `now`, or `holder` holds it. Counts an attempt. Null when someone else holds it or it is
   * no longer pending.
   */
  claimWebhookRequest(
    id: string,
    holder: string,
    now: number,
    expiresAt: number,
  ): Promise<WebhookRequestRow | null>;
  /** Settles a pending request (`accepted` with its session, or `failed`); false if not pending. */
  settleWebhookRequest(
    id: string,
    change: {
      outcome: "accepted" | "failed" | "pending";
      sessionId?: string;
      turnId?: string;
      error?: string | null;
      updatedAt: string;
    },
  ): Promise<boolean>;
  /** A `failed` request back to `pending` with its attempts reset; false if it was not failed. */
  reopenWebhookRequest(id: string, updatedAt: string): Promise<boolean>;
  /** Pending requests whose claim lapsed before `now` (a process died starting them). */
  lapsedWebhookRequests(now: number, limit: number): Promise<WebhookRequestRow[]>;
}
