import type {
  MemoryBindingView,
  OpenQuestion,
  RuntimeState,
  SessionView,
  TurnView,
} from "@opencomputer/protocol";
import type { SessionRecord, TurnRecord } from "../ports/records.ts";
import type { SessionCreation } from "./session-data.ts";

// The shapes clients see are the protocol's; these functions turn store records into them.
export type { SessionView, TurnView };

export function toTurnView(t: TurnRecord): TurnView {
  return {
    id: t.id,
    input: t.input,
    mode: t.mode,
    status: t.status,
    outcome: t.outcome,
    error: t.error,
    createdAt: t.createdAt,
    updatedAt: t.updatedAt,
  };
}

export function toSessionView(
  s: SessionRecord,
  turns: TurnRecord[],
  memory: MemoryBindingView[] = [],
  creation: SessionCreation = { data: {}, parent: null },
): SessionView {
  return {
    id: s.id,
    projectId: s.projectId,
    agentId: s.agentId,
    deploymentId: s.deploymentId,
    environment: s.environment,
    executionMode: s.executionMode,
    status: s.status,
    source: s.source,
    labels: s.labels,
    turns: turns.map(toTurnView),
    result: s.result,
    // Kept as JSON by the store; written only as these shapes (ask.ts, computer-record.ts).
    question: s.question as OpenQuestion | null,
    runtime: s.runtime as RuntimeState,
    data: creation.data,
    parent: creation.parent,
    ...(creation.budget ? { budget: creation.budget } : {}),
    revision: s.revision,
    createdAt: s.createdAt,
    updatedAt: s.updatedAt,
    memory,
  };
}
