// What the crash test's child runtime plays and what the parent checks it against: the scripted
// conversation, the shape of the result value and of a side-effect log line. Shared so the two
// processes cannot drift apart.

export const AGENT_ID = "crash";
export const SCRIPT_NAME = "crash";
/** Children never queue more turns than this on one session, so the script never runs out. */
export const MAX_TURNS_PER_SESSION = 4;
export const STEPS_PER_TURN = 3;

export interface ReportInput {
  n: number;
  label: string;
}

/** The result tool's value: derived from its input, so the parent can recompute it. */
export function reportValue(input: ReportInput): { label: string; doubled: number } {
  return { label: input.label, doubled: input.n * 2 };
}

/** One line per run of a tool: the key is stable across re-runs of the same call. */
export function sideEffectKey(sessionId: string, toolCallId: string): string {
  return `${sessionId}:${toolCallId}`;
}

/** One line of the side-effect log. */
export const SIDE_EFFECT_LINE = /^(ses_[0-9A-Za-z]+):(call_[0-9A-Za-z]+)$/;

/**
 * The model plays step N where N is the number of assistant messages in the prompt, across the
 * whole session: turn k uses steps 3k..3k+2. Each turn: parallel calls (with a model delay so
 * kills land inside model calls), then the result tool beside a slow call, then a final text.
 */
export function buildScript() {
  const steps: unknown[] = [];
  for (let k = 0; k < MAX_TURNS_PER_SESSION; k++) {
    steps.push({
      text: `Turn ${k}: gathering notes.`,
      delayMs: 15,
      toolCalls: [
        { name: "note", input: { text: `a${k}` } },
        { name: "slow", input: { tag: `s${k}` } },
        { name: "note", input: { text: `b${k}` } },
        { name: "slow", input: { tag: `t${k}` } },
      ],
    });
    steps.push({
      toolCalls: [
        { name: "report", input: { n: k + 1, label: `turn-${k}` } },
        { name: "slow", input: { tag: `r${k}` } },
      ],
    });
    steps.push({ text: `Done with turn ${k}.`, delayMs: 25 });
  }
  return { steps };
}
