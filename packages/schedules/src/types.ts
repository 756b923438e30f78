import type { ScheduleDeclaration } from "@opencomputer/agent";
import type { SessionsApi } from "@opencomputer/runtime";

/** A schedule as the current deployment of its agent declares it. */
export interface DeployedSchedule {
  agentId: string;
  deploymentId: string;
  /**
   * The environments whose current deployment this is (absent: every environment). A schedule
   * recurs in an environment only from that environment's deployment.
   */
  environments?: string[];
  schedule: ScheduleDeclaration;
}

/** Where schedulers learn which schedules exist (e.g. @opencomputer/build's deployments). */
export interface ScheduleCatalog {
  list(): Promise<DeployedSchedule[]>;
}

/** What starting a run needs of the runtime. */
export type ScheduleSessions = Pick<SessionsApi, "create" | "sendTurn" | "get">;

export interface SchedulerOptions {
  /** The project the schedules' sessions belong to (default `default`). */
  projectId?: string;
  /** Names this process in the claims it holds (e.g. the runtime id). */
  holder: string;
  /** Epoch ms now; tests pass their own clock. */
  clock?: () => number;
  /** How long a claim protects a start in progress before another process takes it over. */
  claimMs?: number;
  /**
   * An occurrence more than this far in the past when a scheduler first considers it is
   * recorded `missed` instead of started (default 60 000: one tick late is still on time).
   */
  missedAfterMs?: number;
  /** At most this many missed occurrences are recorded per schedule and pass (default 100). */
  maxMissed?: number;
  /** Starts given up after this many attempts are recorded `failed` (default 3). */
  maxAttempts?: number;
  /** Called with errors a pass survives (one schedule's failure does not stop the others). */
  onError?: (error: unknown) => void;
}
