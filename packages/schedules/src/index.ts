export { type CompiledCron, compileCron, cronProblem, occurrencesBetween } from "./cron.ts";
export { listRuns, publicRun, type RunPage } from "./runs-api.ts";
export { type PassReport, Scheduler } from "./scheduler.ts";
export type {
  DeployedSchedule,
  ScheduleCatalog,
  SchedulerOptions,
  ScheduleSessions,
} from "./types.ts";
