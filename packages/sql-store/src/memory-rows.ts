// Memory rows ↔ the MemoryStore port's records (memory-schema.ts has the tables).
import type {
  MemoryBindingRecord,
  MemoryDocumentRecord,
  MemoryResourceRecord,
  NewMemoryBinding,
} from "@opencomputer/runtime";

export interface MemoryDocumentRow {
  id: string;
  title: string;
  text: string;
  summary: string;
  agent_writes: string;
  revision: number | string;
  bytes: number | string;
  writer: string | object;
  deleted: number | boolean;
  updated_at: string;
  max_bytes: number | string;
}

export interface MemoryResourceRow {
  project_id: string;
  environment: string;
  id: string;
  kind: string;
  max_bytes: number | string;
  declared: number | boolean;
  created_at: string;
  updated_at: string;
  documents: number | string;
}

export function documentFromRow(row: MemoryDocumentRow): MemoryDocumentRecord {
  return {
    id: row.id,
    title: row.title,
    text: row.text,
    summary: row.summary,
    agentWrites: row.agent_writes as MemoryDocumentRecord["agentWrites"],
    revision: String(row.revision),
    bytes: Number(row.bytes),
    maxBytes: Number(row.max_bytes),
    updatedAt: row.updated_at,
    writer: (typeof row.writer === "string"
      ? JSON.parse(row.writer)
      : row.writer) as MemoryDocumentRecord["writer"],
    deleted: row.deleted === 1 || row.deleted === true,
  };
}

export function resourceFromRow(row: MemoryResourceRow): MemoryResourceRecord {
  return {
    projectId: row.project_id,
    environment: row.environment,
    id: row.id,
    provider: { kind: row.kind as "document" | "http", maxBytes: Number(row.max_bytes) },
    declared: row.declared === 1 || row.declared === true,
    documents: Number(row.documents),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export interface BindingRow {
  session_id: string;
  project_id: string;
  environment: string;
  resource: string;
  scope: string;
  doc_id: string | null;
  access: string;
  revoked_at: string | null;
}

export function bindingFromRow(row: BindingRow): MemoryBindingRecord {
  return {
    sessionId: row.session_id,
    projectId: row.project_id,
    environment: row.environment,
    resource: row.resource,
    scope: row.scope as MemoryBindingRecord["scope"],
    id: row.doc_id,
    access: row.access as MemoryBindingRecord["access"],
    revokedAt: row.revoked_at,
  };
}

export function sameBindings(
  a: readonly MemoryBindingRecord[],
  b: readonly NewMemoryBinding[],
): boolean {
  const key = (x: NewMemoryBinding) =>
    JSON.stringify([x.projectId, x.environment, x.resource, x.scope, x.id, x.access]);
  return a.length === b.length && a.every((x, i) => key(x) === key(b[i]!));
}
