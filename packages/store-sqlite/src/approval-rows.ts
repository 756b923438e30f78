// Approvals as SQLite rows. Kept apart from rows.ts: approvals outlive their session's turns and
// are read across sessions (recovery), so they have their own table and queries.
import type { ApprovalPatch, ApprovalRecord } from "@opencomputer/runtime";
import { fromJson, toJson } from "./rows.ts";

export const APPROVALS_V2 = `
CREATE TABLE approvals (
  rid INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  session_id TEXT NOT NULL REFERENCES sessions (id),
  turn_id TEXT NOT NULL,
  tool_call_id TEXT NOT NULL,
  agent_id TEXT NOT NULL,
  deployment_id TEXT NOT NULL,
  tool TEXT NOT NULL,
  input TEXT NOT NULL,
  card TEXT NOT NULL,
  digest TEXT NOT NULL,
  status TEXT NOT NULL,
  decision TEXT NOT NULL,
  outcome TEXT NOT NULL,
  error TEXT,
  attempts INTEGER NOT NULL,
  claimed_by TEXT,
  claimed_at TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE (session_id, tool_call_id)
);
CREATE INDEX approvals_by_status ON approvals (status) WHERE status IN ('approved', 'applying');
`;

export const APPROVAL_COLUMNS = `id, session_id, turn_id, tool_call_id, agent_id, deployment_id, tool,
  input, card, digest, status, decision, outcome, error, attempts, claimed_by, claimed_at,
  created_at, updated_at`;

export interface ApprovalRow {
  id: string;
  session_id: string;
  turn_id: string;
  tool_call_id: string;
  agent_id: string;
  deployment_id: string;
  tool: string;
  input: string;
  card: string;
  digest: string;
  status: ApprovalRecord["status"];
  decision: string;
  outcome: string;
  error: string | null;
  attempts: number;
  claimed_by: string | null;
  claimed_at: string | null;
  created_at: string;
  updated_at: string;
}

export const INSERT_APPROVAL = `INSERT INTO approvals (${APPROVAL_COLUMNS})
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;

export function approvalParams(a: ApprovalRecord): unknown[] {
  return [
    a.id,
    a.sessionId,
    a.turnId,
    a.toolCallId,
    a.agentId,
    a.deploymentId,
    a.tool,
    toJson(a.input),
    toJson(a.card),
    a.digest,
    a.status,
    toJson(a.decision),
    toJson(a.outcome),
    a.error,
    a.attempts,
    a.claimedBy,
    a.claimedAt,
    a.createdAt,
    a.updatedAt,
  ];
}

export function approvalFromRow(r: ApprovalRow): ApprovalRecord {
  return {
    id: r.id,
    sessionId: r.session_id,
    turnId: r.turn_id,
    toolCallId: r.tool_call_id,
    agentId: r.agent_id,
    deploymentId: r.deployment_id,
    tool: r.tool,
    input: fromJson(r.input),
    card: fromJson(r.card),
    digest: r.digest,
    status: r.status,
    decision: fromJson(r.decision) as ApprovalRecord["decision"],
    outcome: fromJson(r.outcome),
    error: r.error,
    attempts: r.attempts,
    claimedBy: r.claimed_by,
    claimedAt: r.claimed_at,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

/** Patch fields: [key, column, stored as JSON]. */
export const APPROVAL_FIELDS = [
  ["status", "status", false],
  ["decision", "decision", true],
  ["outcome", "outcome", true],
  ["error", "error", false],
  ["attempts", "attempts", false],
  ["claimedBy", "claimed_by", false],
  ["claimedAt", "claimed_at", false],
] as const;

/** `UPDATE approvals SET …` for the fields a patch sets, and its parameters (id last). */
export function approvalUpdate(
  patch: ApprovalPatch,
  timestamp: string,
): { sql: string; params: unknown[] } {
  let sql = "UPDATE approvals SET updated_at = ?";
  const params: unknown[] = [timestamp];
  for (const [key, column, json] of APPROVAL_FIELDS) {
    const value = patch[key];
    if (value === undefined) continue;
    sql += `, ${column} = ?`;
    params.push(json ? toJson(value) : value);
  }
  return { sql: `${sql} WHERE id = ?`, params };
}
