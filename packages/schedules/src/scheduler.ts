// The scheduler: every pass, for each deployed schedule and each environment it recurs in, the
// occurrences since the schedule's cursor are claimed in the store (one row per schedule and
// intended time, so however many processes pass at once, one starts each occurrence), started,
// and the cursor moved past them.
//
// The missed rule: an occurrence whose time is more than `missedAfterMs` (60 s) before the pass
// that first considers it, because no scheduler was running then, is recorded `missed` and not
// started; after an outage the schedule resumes with its next occurrence instead of a burst. At
// most `maxMissed` (100) missed occurrences are recorded per schedule and pass, the latest ones.
// A schedule's cursor starts when a scheduler first sees it: nothing before that is recorded.
import {
  NotFoundError,
  newId,
  type ScheduleKey,
  type ScheduleRunRow,
  type TriggerStore,
} from "@opencomputer/runtime";
import { type CompiledCron, compileCron, occurrencesBetween } from "./cron.ts";
import { type StartContext, startRun, stillRunning } from "./start-run.ts";
import type {
  DeployedSchedule,
  ScheduleCatalog,
  SchedulerOptions,
  ScheduleSessions,
} from "./types.ts";

/** What one pass did, for logs and tests. */
export interface PassReport {
  started: string[];
  skipped: string[];
  missed: number;
  resumed: string[];
}

const MAX_SCAN = 10_000;

export class Scheduler {
  private readonly projectId: string;
  private readonly now: () => number;
  private readonly ctx: StartContext;
  private readonly compiled = new Map<string, CompiledCron>();
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<unknown> | null = null;

  constructor(
    private readonly store: TriggerStore,
    sessions: ScheduleSessions,
    private readonly catalog: ScheduleCatalog,
    private readonly options: SchedulerOptions,
  ) {
    this.projectId = options.projectId ?? "default";
    this.now = options.clock ?? Date.now;
    this.ctx = { store, sessions, now: this.now, maxAttempts: options.maxAttempts ?? 3 };
  }

  /** One pass over every schedule; safe to run in many processes at once. */
  async pass(): Promise<PassReport> {
    const report: PassReport = { started: [], skipped: [], missed: 0, resumed: [] };
    const deployed = await this.catalog.list();
    for (const d of deployed) {
      for (const environment of d.schedule.enabled) {
        if (d.environments && !d.environments.includes(environment)) continue;
        const key = {
          projectId: this.projectId,
          environment,
          agentId: d.agentId,
          scheduleId: d.schedule.id,
        };
        await this.guard(() => this.passSchedule(key, d, report));
      }
    }
    await this.guard(() => this.resumeLapsed(deployed, report));
    await this.guard(() => this.settleStarted());
    return report;
  }

  /** Passes every `intervalMs` until `stop()`; a pass never overlaps the previous one. */
  start(intervalMs = 1_000): void {
    if (this.timer) return;
    const loop = async () => {
      this.running = this.pass().catch((error) => this.options.onError?.(error));
      await this.running;
      if (this.timer) this.timer = setTimeout(loop, intervalMs);
    };
    this.timer = setTimeout(loop, 0);
  }

  async stop(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running;
  }

  /** Starts a manual run now (in any environment, recurring there or not): the run as stored. */
  async runNow(target: {
    environment: string;
    agentId: string;
    scheduleId: string;
  }): Promise<ScheduleRunRow> {
    const candidates = (await this.catalog.list()).filter(
      (d) => d.agentId === target.agentId && d.schedule.id === target.scheduleId,
    );
    // The environment's own deployment when it has the schedule, else any that declares it.
    const deployed =
      candidates.find((d) => d.environments?.includes(target.environment) ?? true) ?? candidates[0];
    if (!deployed) throw new NotFoundError("schedule", `${target.agentId}/${target.scheduleId}`);
    const now = this.now();
    const { run } = await this.store.insertScheduleRun({
      ...target,
      projectId: this.projectId,
      id: newId("run", now),
      intendedAt: new Date(now).toISOString(),
      timezone: deployed.schedule.timezone,
      manual: true,
      status: "claimed",
      deploymentId: deployed.deploymentId,
      claimedBy: this.options.holder,
      claimExpiresAt: now + this.claimMs(),
      error: null,
      createdAt: new Date(now).toISOString(),
    });
    await startRun({ ...this.ctx, maxAttempts: 1 }, run, deployed.schedule);
    return (await this.store.getScheduleRun(run.id)) ?? run;
  }

  private claimMs(): number {
    return this.options.claimMs ?? 30_000;
  }

  private async guard(fn: () => Promise<void>): Promise<void> {
    try {
      await fn();
    } catch (error) {
      this.options.onError?.(error);
    }
  }

  private cron(d: DeployedSchedule): CompiledCron {
    const id = `${d.schedule.cron}\0${d.schedule.timezone}`;
    let compiled = this.compiled.get(id);
    if (!compiled) {
      compiled = compileCron(d.schedule.cron, d.schedule.timezone);
      this.compiled.set(id, compiled);
    }
    return compiled;
  }

  private async passSchedule(key: ScheduleKey, d: DeployedSchedule, report: PassReport) {
    const now = this.now();
    const cursor = await this.store.scheduleCursor(key);
    if (cursor === null) {
      await this.store.advanceScheduleCursor(key, new Date(now).toISOString());
      return;
    }
    const { times, more } = occurrencesBetween(
      this.cron(d),
      new Date(cursor),
      new Date(now),
      MAX_SCAN,
    );
    if (times.length === 0) return;
    const lateBefore = now - (this.options.missedAfterMs ?? 60_000);
    const late = more ? times : times.filter((t) => t.getTime() < lateBefore);
    const onTime = more ? [] : times.filter((t) => t.getTime() >= lateBefore);
    for (const t of late.slice(-(this.options.maxMissed ?? 100))) {
      const { created } = await this.store.insertScheduleRun(this.newRun(key, d, t, "missed", now));
      if (created) report.missed++;
    }
    const claimed: ScheduleRunRow[] = [];
    for (const t of onTime) {
      const { run, created } = await this.store.insertScheduleRun(
        this.newRun(key, d, t, "claimed", now),
      );
      if (created) claimed.push(run);
    }
    // Claims first, cursor next, starts last: a start that fails leaves a claim that lapses and
    // is taken over (resumeLapsed), never an occurrence the cursor passed without a row.
    await this.store.advanceScheduleCursor(key, times[times.length - 1]!.toISOString());
    for (const run of claimed) await this.begin(run, d, report);
  }

  private newRun(
    key: ScheduleKey,
    d: DeployedSchedule,
    at: Date,
    status: "claimed" | "missed",
    now: number,
  ) {
    return {
      ...key,
      id: newId("run", now),
      intendedAt: at.toISOString(),
      timezone: d.schedule.timezone,
      manual: false,
      status,
      deploymentId: d.deploymentId,
      claimedBy: status === "claimed" ? this.options.holder : null,
      claimExpiresAt: status === "claimed" ? now + this.claimMs() : null,
      error: status === "missed" ? "no scheduler was running at the intended time" : null,
      createdAt: new Date(now).toISOString(),
    };
  }

  /** Skips the run when an earlier one of its schedule is still starting or running. */
  private async begin(run: ScheduleRunRow, d: DeployedSchedule, report: PassReport) {
    if (d.schedule.overlap === "skip" && (await this.earlierRunGoing(run))) {
      await this.store.updateScheduleRun(run.id, ["claimed"], {
        status: "skipped",
        error: "an earlier run was still going (overlap: skip)",
        updatedAt: new Date(this.now()).toISOString(),
      });
      report.skipped.push(run.id);
      return;
    }
    await startRun(this.ctx, run, d.schedule);
    report.started.push(run.id);
  }

  private async earlierRunGoing(run: ScheduleRunRow): Promise<boolean> {
    const open = await this.store.openScheduleRuns(run);
    for (const other of open) {
      const earlier =
        other.intendedAt < run.intendedAt ||
        (other.intendedAt === run.intendedAt && other.id < run.id);
      if (other.id !== run.id && earlier && (await stillRunning(this.ctx, other))) return true;
    }
    return false;
  }

  /** Takes over starts whose process died mid-claim (their claim lapsed). */
  private async resumeLapsed(deployed: DeployedSchedule[], report: PassReport) {
    const now = this.now();
    for (const lapsed of await this.store.lapsedScheduleClaims(now, 50)) {
      const run = await this.store.reclaimScheduleRun(
        lapsed.id,
        this.options.holder,
        now,
        now + this.claimMs(),
      );
      if (!run) continue;
      const mine = deployed.filter(
        (x) => x.agentId === run.agentId && x.schedule.id === run.scheduleId,
      );
      const d = mine.find((x) => x.environments?.includes(run.environment) ?? true) ?? mine[0];
      if (!d) {
        await this.store.updateScheduleRun(run.id, ["claimed"], {
          status: "failed",
          error: "schedule_removed: the schedule is no longer deployed",
          updatedAt: new Date(now).toISOString(),
        });
        continue;
      }
      await startRun(this.ctx, run, d.schedule);
      report.resumed.push(run.id);
    }
  }

  /** Records the outcome of runs whose turn has settled. */
  private async settleStarted() {
    for (const run of await this.store.startedScheduleRuns(200)) {
      await this.guard(async () => {
        await stillRunning(this.ctx, run);
      });
    }
  }
}
