// What `dev` and `server` run beside the runtime: the scheduler over the current deployments'
// schedules and the retry pass for webhook starts, both on the store's trigger tables, plus the
// handler options that serve their routes.
import { createScheduleCatalog } from "@opencomputer/build";
import type { Runtime, TriggerStore } from "@opencomputer/runtime";
import { Scheduler } from "@opencomputer/schedules";
import type { HandlerOptions } from "@opencomputer/server";
import { Webhooks } from "@opencomputer/webhooks";

export interface RunningTriggers {
  handler: Pick<HandlerOptions, "schedules" | "webhooks">;
  close(): Promise<void>;
}

const warn = (what: string) => (error: unknown) =>
  process.stderr.write(`warning: ${what}: ${String(error)}\n`);

/**
 * Starts the scheduler (a pass every OPENCOMPUTER_SCHEDULER_INTERVAL_MS, default 1 000) and the
 * webhook retry pass (every 5 s). Schedules belong to the `default` project.
 */
export function startTriggers(
  projectDir: string,
  runtime: Runtime,
  triggers: TriggerStore,
): RunningTriggers {
  const catalog = createScheduleCatalog(projectDir);
  const scheduler = new Scheduler(triggers, runtime.sessions, catalog, {
    holder: runtime.runtimeId,
    onError: warn("schedule pass"),
  });
  const webhooks = new Webhooks({
    store: triggers,
    sessions: runtime.sessions,
    holder: runtime.runtimeId,
  });
  const interval = Number(process.env.OPENCOMPUTER_SCHEDULER_INTERVAL_MS ?? 1_000);
  scheduler.start(Number.isInteger(interval) && interval >= 10 ? interval : 1_000);
  const retry = setInterval(() => void webhooks.resume().catch(warn("webhook retry")), 5_000);
  retry.unref();
  return {
    handler: { schedules: { scheduler, store: triggers, catalog, projectId: "default" }, webhooks },
    async close() {
      clearInterval(retry);
      await scheduler.stop();
    },
  };
}
