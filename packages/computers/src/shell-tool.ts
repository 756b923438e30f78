import type { BuiltInResult, BuiltInTool, BuiltInToolContext } from "@opencomputer/runtime";
import { MAX_COMMAND_SECONDS } from "./bwrap-provider.ts";
import type { Computer, ComputerProvider, RunFailure, RunOutcome } from "./computer-provider.ts";
import { SessionQueue } from "./session-queue.ts";

export const DEFAULT_TIMEOUT_SECONDS = 120;
export const MAX_COMMAND_BYTES = 64 * 1024;

const DESCRIPTION =
  "Run a shell command (bash) on this session's isolated computer. The working directory is " +
  "/workspace, the only place files persist across computers; /tmp and processes do not. " +
  "No network. Returns exitCode, stdout, stderr (each bounded; `truncated` marks a cut) and " +
  "durationMs. timeoutSeconds defaults to 120 (max 1800); on timeout every process the " +
  "command started is stopped. A `note` field explains what the exit code cannot, such as " +
  "the computer's memory limit killing a process.";

type Validated = { ok: true; command: string; timeoutSeconds: number } | BuiltInResult;

/** Checked here as well as by the runtime's schema: out-of-range input must never run. */
export function validateShellInput(input: Record<string, unknown>, maxSeconds: number): Validated {
  const { command, timeoutSeconds = DEFAULT_TIMEOUT_SECONDS } = input;
  if (typeof command !== "string" || command.trim() === "") {
    return { ok: false, message: "`command` must be a non-empty string." };
  }
  if (command.includes("\0")) {
    // bash cannot hold NUL in a string; refusing beats running a silently different command.
    return { ok: false, message: "`command` must not contain NUL characters." };
  }
  if (Buffer.byteLength(command, "utf8") > MAX_COMMAND_BYTES) {
    return { ok: false, message: `\`command\` is longer than ${MAX_COMMAND_BYTES} bytes.` };
  }
  if (
    typeof timeoutSeconds !== "number" ||
    !Number.isInteger(timeoutSeconds) ||
    timeoutSeconds < 1 ||
    timeoutSeconds > maxSeconds
  ) {
    return {
      ok: false,
      message: `\`timeoutSeconds\` must be an integer from 1 to ${maxSeconds}; nothing was run.`,
    };
  }
  return { ok: true, command, timeoutSeconds };
}

function failureMessage(failure: RunFailure): string {
  const parts = [failure.message];
  if (failure.stdout) parts.push(`--- stdout so far ---\n${failure.stdout}`);
  if (failure.stderr) parts.push(`--- stderr so far ---\n${failure.stderr}`);
  if (failure.truncated) parts.push("(output truncated)");
  return parts.join("\n");
}

/**
 * The `shell` and `sandbox_exec` built-in tools: the same behaviour under the two ids agents
 * select. They share one queue, so a session's commands are serialized across both ids.
 */
export function createShellTools(provider: ComputerProvider): BuiltInTool[] {
  const queue = new SessionQueue();
  const maxSeconds = Math.min(MAX_COMMAND_SECONDS, provider.maxCommandSeconds());
  const input = {
    type: "object",
    properties: {
      command: { type: "string", minLength: 1, maxLength: MAX_COMMAND_BYTES },
      timeoutSeconds: { type: "integer", minimum: 1, maximum: maxSeconds },
    },
    required: ["command"],
    additionalProperties: false,
  };

  const execute = async (ctx: BuiltInToolContext): Promise<BuiltInResult> => {
    const valid = validateShellInput(ctx.input, maxSeconds);
    if (!("command" in valid)) return valid;
    return queue.run(ctx.sessionId, async (): Promise<BuiltInResult> => {
      if (ctx.signal.aborted) {
        return { ok: false, message: "Interrupted before the command started; nothing was run." };
      }
      // A computer released between acquire and run (e.g. its idle timer fired) ran nothing,
      // so trying once more on a fresh one cannot repeat a command.
      let outcome: RunOutcome | undefined;
      for (let attempt = 0; attempt < 2; attempt++) {
        let computer: Computer;
        try {
          computer = await provider.acquire(ctx.sessionId, {
            minRemainingSeconds: valid.timeoutSeconds,
          });
        } catch (error) {
          const reason = error instanceof Error ? error.message : String(error);
          return { ok: false, message: `No computer could be started; nothing was run. ${reason}` };
        }
        outcome = await computer.run(valid.command, {
          timeoutSeconds: valid.timeoutSeconds,
          signal: ctx.signal,
        });
        if (outcome.ok || outcome.failure.code !== "computer_unavailable") break;
      }
      if (!outcome) throw new Error("unreachable: the loop runs at least once");
      if (!outcome.ok) return { ok: false, message: failureMessage(outcome.failure) };
      const { exitCode, stdout, stderr, durationMs, truncated, note } = outcome.result;
      const output = { exitCode, stdout, stderr, durationMs, truncated };
      return { ok: true, output: note ? { ...output, note } : output };
    });
  };
  const onSessionEnd = (sessionId: string) => provider.release(sessionId, "session_ended");

  return ["shell", "sandbox_exec"].map((id) => ({
    id,
    description: DESCRIPTION,
    input,
    execute,
    onSessionEnd,
  }));
}
