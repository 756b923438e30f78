import type { JsonValue } from "@opencomputer/agent";
import type { SessionRecord, TurnRecord } from "../store/records.ts";

export interface TurnView {
  id: string;
  input: TurnRecord["input"];
  mode: TurnRecord["mode"];
  status: TurnRecord["status"];
  outcome: string | null;
  error: TurnRecord["error"];
  createdAt: string;
  updatedAt: string;
}

/** `GET /sessions/<id>`: the session as clients see it (no lease, no internal counters). */
export interface SessionView {
  id: string;
  projectId: string;
  agentId: string;
  deploymentId: string;
  environment: string;
  executionMode: SessionRecord["executionMode"];
  status: SessionRecord["status"];
  source: SessionRecord["source"];
  labels: Record<string, string>;
  turns: TurnView[];
  result: SessionRecord["result"];
  question: JsonValue | null;
  runtime: JsonValue;
  revision: number;
  createdAt: string;
  updatedAt: string;
}

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

export function toSessionView(s: SessionRecord, turns: TurnRecord[]): SessionView {
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
    question: s.question,
    runtime: s.runtime,
    revision: s.revision,
    createdAt: s.createdAt,
    updatedAt: s.updatedAt,
  };
}
