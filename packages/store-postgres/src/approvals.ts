// Approvals on PostgreSQL: their table (migration 2), their patchable fields and the reads
// (the two write ops are write-function.ts's). Kept
// apart from the session tables' code: approvals outlive their session's turns and are read
// across sessions (recovery).
import type { ApprovalRecord, ApprovalStatus } from "@opencomputer/runtime";

export const APPROVALS_V2 = `
CREATE TABLE approvals (
  rid bigserial PRIMARY KEY,
  id text COLLATE "C" NOT NULL UNIQUE,
  session_id text COLLATE "C" NOT NULL REFERENCES sessions (id),
  turn_id text NOT NULL,
  tool_call_id text COLLATE "C" NOT NULL,
  agent_id text NOT NULL,
  deployment_id text NOT NULL,
  tool text NOT NULL,
  input json NOT NULL,
  card json NOT NULL,
  digest text NOT NULL,
  status text NOT NULL,
  decision json NOT NULL,
  outcome json NOT NULL,
  error text,
  attempts integer NOT NULL,
  claimed_by text,
  claimed_at text,
  created_at text NOT NULL,
  updated_at text NOT NULL,
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
  input: ApprovalRecord["input"];
  card: ApprovalRecord["card"];
  digest: string;
  status: ApprovalStatus;
  decision: ApprovalRecord["decision"];
  outcome: ApprovalRecord["outcome"];
  error: string | null;
  attempts: number;
  claimed_by: string | null;
  claimed_at: string | null;
  created_at: string;
  updated_at: string;
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
    input: r.input,
    card: r.card,
    digest: r.digest,
    status: r.status,
    decision: r.decision,
    outcome: r.outcome,
    error: r.error,
    attempts: r.attempts,
    claimedBy: r.claimed_by,
    claimedAt: r.claimed_at,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

/** The patchable fields of an approval: [key in the patch, column, stored as JSON]. */
export const APPROVAL_FIELDS = [
  ["status", "status", false],
  ["decision", "decision", true],
  ["outcome", "outcome", true],
  ["error", "error", false],
  ["attempts", "attempts", false],
  ["claimedBy", "claimed_by", false],
  ["claimedAt", "claimed_at", false],
] as const;
