/**
 * The port between the shell tool and whatever hosts a session's computer. Bubblewrap is the
 * default implementation; a VM or remote host would implement the same shape.
 */

export interface RunOptions {
  timeoutSeconds: number;
  /** Aborting (turn interrupt) stops the command exactly like a timeout does. */
  signal?: AbortSignal;
}

export interface RunResult {
  exitCode: number;
  stdout: string;
  stderr: string;
  durationMs: number;
  /** True when stdout or stderr lost bytes to the output bound. */
  truncated: boolean;
  /** Set when something happened the exit code does not say, e.g. the memory limit killed a process. */
  note?: string;
}

/**
 * Why a run did not produce a result. `timeout` and `aborted` are only reported once every
 * process of the command is confirmed gone; when that cannot be confirmed the code is
 * `outcome_unknown` and the computer is retired.
 */
export type RunFailureCode =
  | "timeout"
  | "aborted"
  | "outcome_unknown"
  | "computer_lost"
  | "computer_unavailable"
  | "spawn_failed"
  /** The computer wrote more than its disk quota; it was stopped (see disk-quota.ts). */
  | "disk_quota_exceeded"
  /** The command replaced its own output file with a link, FIFO or other non-regular file. */
  | "output_refused";

export interface RunFailure {
  code: RunFailureCode;
  message: string;
  stdout: string;
  stderr: string;
  durationMs: number;
  truncated: boolean;
}

export type RunOutcome = { ok: true; result: RunResult } | { ok: false; failure: RunFailure };

export type ReleaseReason =
  | "idle"
  | "requested"
  | "lifetime"
  | "session_ended"
  | "operation_unsettled"
  | "unresponsive"
  | "unverifiable"
  /** It wrote more than its disk quota (possibly a background process, between commands). */
  | "disk_quota"
  | "unknown";

export interface Computer {
  readonly sessionId: string;
  /** 1 for a session's first computer; a fresh computer for the same session gets the next. */
  readonly generation: number;
  readonly startedAt: number;
  readonly expiresAt: number;
  /** Seconds a command may still be given here (lifetime minus the reserved tail). */
  remainingSeconds(): number;
  /** False once released or retired after an unconfirmed stop. */
  usable(): boolean;
  run(command: string, options: RunOptions): Promise<RunOutcome>;
  release(reason: ReleaseReason): Promise<void>;
}

export interface AcquireOptions {
  /** The computer must be able to host a command of this many seconds, else a fresh one is used. */
  minRemainingSeconds: number;
}

export interface LifecycleEvent {
  sessionId: string;
  generation: number;
  state: "running" | "released";
  /** Why a computer was released; on `running`, why its predecessor was replaced (if any). */
  reason?: ReleaseReason;
  startedAt: number;
  expiresAt: number;
}

export interface ComputerProvider {
  acquire(sessionId: string, options: AcquireOptions): Promise<Computer>;
  /** Releases the session's current computer, if any (e.g. on request or session end). */
  release(sessionId: string, reason: ReleaseReason): Promise<void>;
  /** Longest command a fresh computer can host; tools refuse longer timeouts up front. */
  maxCommandSeconds(): number;
  /** Releases every computer; for shutdown. */
  close(): Promise<void>;
}
