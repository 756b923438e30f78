import type { ReleaseReason, RunFailureCode, RunOutcome } from "./computer-provider.ts";
import type { ExecEnd } from "./resident-sandbox.ts";

/**
 * Turns how a command ended into what the tool reports, and whether the computer must go.
 * Every failure says what happened, what became of the computer and /workspace, and what to do.
 */

export interface Output {
  stdout: string;
  stderr: string;
  durationMs: number;
  truncated: boolean;
}

export interface EndFacts {
  end: ExecEnd;
  /** What made the runtime stop the command, when it did. */
  stopCode: "timeout" | "aborted" | "disk_quota";
  what: string;
  timeoutSeconds: number;
  output: Output;
  oomNote: string | undefined;
  /** Set when an output file was not a plain file of the sandbox's (and was not read). */
  refused: string | undefined;
  /** Set when the disk quota was passed (during the command or found right after it). */
  quotaNote: string | undefined;
  diagnostics: string;
}

export type Settled = { outcome: RunOutcome; releaseReason?: ReleaseReason };

function failure(
  code: RunFailureCode,
  message: string,
  output: Output,
  releaseReason?: ReleaseReason,
): Settled {
  return {
    outcome: { ok: false, failure: { code, message, ...output } },
    ...(releaseReason ? { releaseReason } : {}),
  };
}

const QUOTA_ADVICE =
  "Delete files in /workspace to get back under the quota (a command that only deletes is " +
  "never stopped for it); the next command gets a fresh computer with the same /workspace.";

/** What the output file had become, by UnsafeFileReason. */
const REFUSED_AS: Record<string, string> = {
  symlink: "a symbolic link",
  fifo: "a FIFO",
  socket: "a socket",
  not_regular: "something other than a plain file",
  hard_linked: "a hard link",
  foreign_owner: "a file of another owner",
};

function refusedMessage(facts: EndFacts): string {
  const as = REFUSED_AS[facts.refused ?? ""] ?? "something other than a plain file";
  return (
    `The output of \`${facts.what}\` was not read: the command replaced its output file with ` +
    `${as}, so its output is withheld. Commands must not touch the files under ` +
    "/run/computer; write to /workspace or /tmp instead."
  );
}

function exitedOutcome(facts: EndFacts, exitCode: number): Settled {
  const { output, oomNote, quotaNote } = facts;
  if (quotaNote) {
    const message =
      `\`${facts.what}\` exited with ${exitCode}, but the computer is over its disk quota: ` +
      `${quotaNote}. The computer was stopped. ${QUOTA_ADVICE}`;
    return failure("disk_quota_exceeded", message, output, "disk_quota");
  }
  const result = { exitCode, ...output, ...(oomNote ? { note: oomNote } : {}) };
  return { outcome: { ok: true, result } };
}

function stoppedMessage(facts: EndFacts): string {
  const { what, timeoutSeconds, stopCode } = facts;
  if (stopCode === "disk_quota") {
    return (
      `\`${what}\` was stopped because the computer went over its disk quota: ` +
      `${facts.quotaNote}. It and every process it started were stopped. ${QUOTA_ADVICE}`
    );
  }
  return stopCode === "timeout"
    ? `Command \`${what}\` timed out after ${timeoutSeconds}s; it and every process ` +
        "it started were stopped (the computer was terminated; files in /workspace remain). " +
        "Output so far is attached."
    : `Command \`${what}\` was interrupted; it and every process it started were stopped ` +
        "(the computer was terminated; files in /workspace remain).";
}

export function settle(facts: EndFacts): Settled {
  const { end, output, oomNote, what, timeoutSeconds } = facts;
  const refusalNote = facts.refused ? `\n${refusedMessage(facts)}` : "";
  if (end.kind === "exited") {
    if (facts.refused && !facts.quotaNote) {
      return failure("output_refused", refusedMessage(facts), output);
    }
    return exitedOutcome(facts, end.exitCode);
  }
  if (end.kind === "lost") {
    const message =
      `The computer terminated while \`${what}\` ran; every process in it is gone and files ` +
      "written to /workspace remain. The next command gets a fresh computer." +
      (oomNote ? `\n${oomNote}` : "") +
      (facts.diagnostics ? `\nComputer log: ${facts.diagnostics.slice(-500)}` : "") +
      refusalNote;
    return failure("computer_lost", message, output, "unknown");
  }
  if (!end.confirmed) {
    const message =
      `Outcome unknown: \`${what}\` (timeout ${timeoutSeconds}s) could not be confirmed ` +
      "stopped because the computer stopped answering. That computer runs nothing more; the " +
      "next command gets a fresh one with the same /workspace. The command was not re-run." +
      refusalNote;
    return failure("outcome_unknown", message, output, "unresponsive");
  }
  const message = stoppedMessage(facts) + (oomNote ? `\n${oomNote}` : "") + refusalNote;
  const code = facts.stopCode === "disk_quota" ? "disk_quota_exceeded" : facts.stopCode;
  const reason = facts.stopCode === "disk_quota" ? "disk_quota" : "operation_unsettled";
  return failure(code, message, output, reason);
}
