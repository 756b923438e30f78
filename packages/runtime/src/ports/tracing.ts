// Tracing as the engine sees it: spans for a turn, its steps, model calls and tool calls, with
// no knowledge of how they are exported. `@opencomputer/telemetry` implements it on
// OpenTelemetry; without it the engine gets NO_TRACING, whose calls do nothing and allocate
// nothing, so tracing that is off costs nothing measurable.
//
// A turn may run in several processes (a crash, a takeover): every process's spans of one turn
// share a trace, derived from the turn id, and hang under the turn's own span, which whichever
// process settles the turn emits once with the turn's whole duration.

/** Values a span may carry (OpenTelemetry attribute values). */
export type SpanAttributes = Record<string, string | number | boolean | string[] | undefined>;

export interface SpanHandle {
  setAttributes(attributes: SpanAttributes): void;
  /**
   * Marks the span failed. `code` is a public code (`error.type`); `message` must be fit for an
   * operator's trace store: a public message, never a secret or a user's content.
   */
  fail(code: string, message: string): void;
  /** A span below this one, started now. */
  child(name: string, attributes?: SpanAttributes): SpanHandle;
  end(): void;
}

/** The turn a span belongs to: its trace is derived from `turnId`. */
export interface TraceTurn {
  sessionId: string;
  turnId: string;
  agentId: string;
  deploymentId: string;
}

/** A settled turn; the agent and deployment when the settling code knew them. */
export interface SettledTurn {
  sessionId: string;
  turnId: string;
  agentId?: string;
  deploymentId?: string;
  startedAt: string;
  settledAt: string;
  /** `completed`, `question`, `failed` or `cancelled`. */
  outcome: string;
  error?: { code: string; message: string };
}

export interface Tracing {
  /**
   * This process's work on a turn (a run from its start or its resumption), as a child of the
   * turn's span; steps, model calls and tool calls are its children.
   */
  turnRun(turn: TraceTurn): SpanHandle;
  /** A span in the turn's trace outside a run (an approval's apply, a question's answer). */
  inTurn(turn: TraceTurn, name: string, attributes?: SpanAttributes): SpanHandle;
  /** The turn's own span, emitted once by the process that settled the turn. */
  turnSettled(turn: SettledTurn): void;
  /** True when the operator opted in to prompts and tool inputs/outputs in spans. */
  readonly recordContent: boolean;
  /** Sends what is buffered; call before the process exits. */
  close(): Promise<void>;
}

export const NO_SPAN: SpanHandle = {
  setAttributes() {},
  fail() {},
  child: () => NO_SPAN,
  end() {},
};

/** Tracing that is off: every call returns the same inert span. */
export const NO_TRACING: Tracing = {
  turnRun: () => NO_SPAN,
  inTurn: () => NO_SPAN,
  turnSettled() {},
  recordContent: false,
  close: async () => {},
};
