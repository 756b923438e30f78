// `defineSchedule` declares when an agent starts by itself. The declaration is static data (the
// build reads it from source, with file and line on every error, and records it in the
// deployment), so the same checks run here when the module loads and in the build.

import { OpenComputerError } from "./errors.ts";
import { assertJsonCompatible, jsonByteLength } from "./json-compatible.ts";
import type { JsonValue } from "./types.ts";

export const SCHEDULE_ID_PATTERN = /^[a-zA-Z0-9][a-zA-Z0-9_-]{0,63}$/;
/** What one cron field may be written with (numbers, names, `*`, `,`, `-`, `/`). */
const CRON_FIELD = /^[0-9A-Za-z*,/-]+$/;
const KEYS = ["id", "cron", "timezone", "enabled", "overlap", "dispatch"] as const;
const DISPATCH_KEYS = ["text", "payload"] as const;
/** `default` is the single-environment name for production, as the platform spells it. */
export const SCHEDULE_ENVIRONMENTS = ["development", "production", "default"] as const;
export const SCHEDULE_LIMITS = { textChars: 100_000, payloadBytes: 256 * 1024 } as const;

export type ScheduleEnvironment = (typeof SCHEDULE_ENVIRONMENTS)[number];

export interface ScheduleDefinition {
  /** The file name under `schedules/` without `.ts`. */
  id: string;
  /** Five fields: minute hour day-of-month month day-of-week. */
  cron: string;
  /** An IANA time zone such as `UTC` or `Europe/London` (default `UTC`). */
  timezone?: string;
  /** Environments where the schedule recurs (default `["production"]`); elsewhere run-now only. */
  enabled?: readonly ScheduleEnvironment[];
  /** `skip` (default): an occurrence while an earlier run is going is recorded skipped. */
  overlap?: "skip" | "allow";
  /** The first turn's input: `text` and/or a JSON `payload`. */
  dispatch?: { text?: string; payload?: JsonValue };
}

/** A schedule with its defaults applied, as a deployment records it. */
export interface ScheduleDeclaration {
  id: string;
  cron: string;
  timezone: string;
  enabled: Array<"development" | "production">;
  overlap: "skip" | "allow";
  dispatch: { text?: string; payload?: JsonValue };
}

export class ScheduleDefinitionError extends OpenComputerError {}

export interface ScheduleIssue {
  code: string;
  /** The field at fault, e.g. `cron` or `dispatch.payload.items[2]`. */
  path: string;
  message: string;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** Whether the runtime's Intl knows the zone (it knows the IANA database). */
export function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** Every problem of a schedule definition, with the field at fault; empty when it is sound. */
export function scheduleIssues(value: unknown): ScheduleIssue[] {
  if (!isObject(value)) {
    return [{ code: "schedule_invalid", path: "schedule", message: "must be an object" }];
  }
  const issues: ScheduleIssue[] = [];
  const add = (code: string, path: string, message: string) => issues.push({ code, path, message });
  for (const key of Object.keys(value)) {
    if (!(KEYS as readonly string[]).includes(key))
      add("schedule_unknown_field", key, `is not a schedule field (allowed: ${KEYS.join(", ")})`);
  }
  if (typeof value.id !== "string" || !SCHEDULE_ID_PATTERN.test(value.id))
    add("schedule_id_invalid", "id", `must be a string matching ${SCHEDULE_ID_PATTERN}`);
  if (typeof value.cron !== "string") add("schedule_cron_invalid", "cron", "must be a string");
  else {
    const fields = value.cron.trim().split(/\s+/);
    if (fields.length !== 5)
      add(
        "schedule_cron_invalid",
        "cron",
        `has ${fields.length} fields; write five: minute hour day-of-month month day-of-week (e.g. "0 9 * * 1-5")`,
      );
    else if (!fields.every((f) => CRON_FIELD.test(f)))
      add("schedule_cron_invalid", "cron", "may use only digits, names, *, comma, - and /");
  }
  if (value.timezone !== undefined) {
    if (typeof value.timezone !== "string" || !isTimeZone(value.timezone))
      add(
        "schedule_timezone_invalid",
        "timezone",
        `${JSON.stringify(value.timezone)} is not an IANA time zone (e.g. "UTC", "America/Los_Angeles")`,
      );
  }
  enabledIssues(value.enabled, add);
  if (value.overlap !== undefined && value.overlap !== "skip" && value.overlap !== "allow")
    add("schedule_overlap_invalid", "overlap", 'must be "skip" or "allow"');
  dispatchIssues(value.dispatch, add);
  return issues;
}

type Add = (code: string, path: string, message: string) => void;

function enabledIssues(enabled: unknown, add: Add): void {
  if (enabled === undefined) return;
  if (!Array.isArray(enabled)) {
    add("schedule_enabled_invalid", "enabled", "must be an array of environment names");
    return;
  }
  enabled.forEach((env, i) => {
    if (!(SCHEDULE_ENVIRONMENTS as readonly unknown[]).includes(env))
      add(
        "schedule_enabled_invalid",
        `enabled[${i}]`,
        `must be one of ${SCHEDULE_ENVIRONMENTS.join(", ")}`,
      );
  });
}

function dispatchIssues(dispatch: unknown, add: Add): void {
  if (dispatch === undefined) return;
  if (!isObject(dispatch)) {
    add("schedule_dispatch_invalid", "dispatch", "must be an object {text?, payload?}");
    return;
  }
  for (const key of Object.keys(dispatch)) {
    if (!(DISPATCH_KEYS as readonly string[]).includes(key))
      add(
        "schedule_dispatch_invalid",
        `dispatch.${key}`,
        "is not a dispatch field (text, payload)",
      );
  }
  if (dispatch.text !== undefined) {
    if (typeof dispatch.text !== "string")
      add("schedule_dispatch_invalid", "dispatch.text", "must be a string");
    else if (dispatch.text.length > SCHEDULE_LIMITS.textChars)
      add(
        "schedule_dispatch_invalid",
        "dispatch.text",
        `is ${dispatch.text.length} characters; the limit is ${SCHEDULE_LIMITS.textChars}`,
      );
  }
  if (dispatch.payload === undefined) return;
  try {
    const payload = assertJsonCompatible(dispatch.payload, "dispatch.payload");
    const bytes = jsonByteLength(payload);
    if (bytes > SCHEDULE_LIMITS.payloadBytes)
      add(
        "schedule_payload_too_large",
        "dispatch.payload",
        `is ${bytes} bytes of JSON; the limit is ${SCHEDULE_LIMITS.payloadBytes}`,
      );
  } catch (error) {
    const e = error as OpenComputerError;
    add("schedule_payload_not_json", String(e.details?.path ?? "dispatch.payload"), e.message);
  }
}

/** The definition with its defaults; call only on a definition without issues. */
export function scheduleDeclaration(def: ScheduleDefinition): ScheduleDeclaration {
  const enabled = new Set<"development" | "production">();
  for (const env of def.enabled ?? ["production"])
    enabled.add(env === "default" ? "production" : env);
  return {
    id: def.id,
    cron: def.cron.trim().split(/\s+/).join(" "),
    timezone: def.timezone ?? "UTC",
    enabled: [...enabled].sort(),
    overlap: def.overlap ?? "skip",
    dispatch: {
      ...(def.dispatch?.text !== undefined ? { text: def.dispatch.text } : {}),
      ...(def.dispatch?.payload !== undefined ? { payload: def.dispatch.payload } : {}),
    },
  };
}

/**
 * Declares a schedule; the module's default export, in `agents/<agent>/schedules/<id>.ts`.
 * Throws a ScheduleDefinitionError naming the first field at fault.
 */
export function defineSchedule(def: ScheduleDefinition): ScheduleDeclaration {
  const [first] = scheduleIssues(def);
  if (first) {
    throw new ScheduleDefinitionError(first.code, `Schedule: ${first.path} ${first.message}`, {
      path: first.path,
    });
  }
  return Object.freeze(scheduleDeclaration(def));
}
