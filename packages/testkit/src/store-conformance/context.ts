import type {
  EventRecord,
  MessageRecord,
  ResultRecord,
  SessionRecord,
  Store,
  ToolCallRecord,
  TurnRecord,
  WriteBatch,
} from "@opencomputer/runtime";

export interface Snapshot {
  session: SessionRecord | undefined;
  turns: TurnRecord[];
  messages: MessageRecord[];
  toolCalls: ToolCallRecord[];
  results: ResultRecord[];
  events: EventRecord[];
}

/** What every section of the conformance suite gets: the fresh store and shared helpers. */
export interface SuiteContext {
  /** The store of the running test (a new, empty one per test). */
  store(): Store;
  newSession(over?: Partial<SessionRecord>): Promise<SessionRecord>;
  newTurn(sessionId: string, over?: Partial<TurnRecord>): Promise<TurnRecord>;
  /** Everything the store holds for a session, to show a refused batch changed nothing. */
  snapshot(sessionId: string): Promise<Snapshot>;
  /** A batch touching every table, so a refusal that leaks any part of it is seen. */
  fullBatch(sessionId: string, turnId: string): WriteBatch;
}
