import { boolean, type Infer, integer, nullable, object, oneOf, string } from "../shape.ts";

/** Where a scheduled session came from: `input.schedule` on a turn with `source: "schedule"`. */
export const scheduleInputShape = object({
  scheduleId: string(),
  runId: string(),
  /** The occurrence the run is for (ISO 8601, UTC); for a manual run, when it was asked for. */
  intendedAt: string(),
  timezone: string(),
  /** 1 on the first start; more when a start was taken over after its process died. */
  attempt: integer(),
  manual: boolean(),
});
export type ScheduleInput = Infer<typeof scheduleInputShape>;

/** Where a webhook session came from: `input.webhook` on a turn with `source: "webhook"`. */
export const webhookInputShape = object({
  webhookId: string(),
  requestId: string(),
  receivedAt: string(),
});
export type WebhookInput = Infer<typeof webhookInputShape>;

export const SCHEDULE_RUN_STATUSES = [
  "claimed",
  "started",
  "completed",
  "failed",
  "cancelled",
  "skipped",
  "missed",
] as const;
export type ScheduleRunStatus = (typeof SCHEDULE_RUN_STATUSES)[number];

/** One occurrence of a schedule in one environment (`GET …/schedules/<id>/runs`). */
export const scheduleRunShape = object({
  id: string(),
  projectId: string(),
  environment: string(),
  agentId: string(),
  scheduleId: string(),
  intendedAt: string(),
  timezone: string(),
  manual: boolean(),
  /**
   * `claimed` (a process is starting it), `started` (its session runs the turn), then
   * `completed` / `failed` / `cancelled` as the turn settled; `skipped` (an earlier run was still
   * going, `overlap: "skip"`), `missed` (no process ran at the time), or `failed` with `error`.
   */
  status: oneOf(SCHEDULE_RUN_STATUSES),
  attempt: integer(),
  deploymentId: nullable(string()),
  sessionId: nullable(string()),
  turnId: nullable(string()),
  error: nullable(string()),
  createdAt: string(),
  updatedAt: string(),
});
export type ScheduleRun = Infer<typeof scheduleRunShape>;

/** A webhook as the API shows it: never its token (`POST` create and rotate answer it once). */
export const webhookRecordShape = object({
  id: string(),
  projectId: string(),
  environment: string(),
  agentId: string(),
  name: string(),
  enabled: boolean(),
  /** The URL without its token. */
  url: string(),
  createdAt: string(),
  updatedAt: string(),
  tokenRotatedAt: nullable(string()),
});
export type WebhookRecord = Infer<typeof webhookRecordShape>;

export const WEBHOOK_REQUEST_OUTCOMES = ["pending", "accepted", "failed"] as const;

/** One delivery a webhook received (`POST /webhooks/<id>/<token>` answers it). */
export const webhookRequestShape = object({
  id: string(),
  webhookId: string(),
  /** The sender's delivery id (`Idempotency-Key`, `Request-ID`, `X-GitHub-Delivery`, `Svix-Id`). */
  deliveryKey: nullable(string()),
  outcome: oneOf(WEBHOOK_REQUEST_OUTCOMES),
  sessionId: nullable(string()),
  turnId: nullable(string()),
  error: nullable(string()),
  receivedAt: string(),
  updatedAt: string(),
});
export type WebhookRequest = Infer<typeof webhookRequestShape>;
