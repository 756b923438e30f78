// Memory rows ↔ the MemoryStore port's records (memory-schema.ts has the tables).
import type { MemoryDocumentRecord, MemoryResourceRecord } from "@opencomputer/runtime";

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
    documents: Number(row.documents),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
