// The checks every MemoryStore makes before it writes, in one place so SQLite and PostgreSQL
// refuse the same inputs with the same codes and paths (docs/memory.md, Limits).

import {
  MEMORY_DOCUMENT_ID_PATTERN,
  MEMORY_LIMITS,
  MEMORY_RESOURCE_ID_PATTERN,
  utf8Bytes,
} from "@opencomputer/agent/internal";
import type { AgentWrites } from "@opencomputer/protocol";
import { MemoryError } from "./memory-errors.ts";
import type {
  MemoryKey,
  MemoryPatch,
  MemoryProviderConfig,
  MemoryTextChange,
  NewMemoryBinding,
  NewMemoryDocument,
} from "./memory-store.ts";

export { MEMORY_LIMITS };

function invalid(path: string, message: string): never {
  throw new MemoryError("invalid_request", message, { path });
}

function tooLarge(path: string, bytes: number, max: number): never {
  throw new MemoryError(
    "memory_limit_exceeded",
    `"${path}" is ${bytes} UTF-8 bytes; the limit is ${max}`,
    { path, bytes, maxBytes: max },
  );
}

export function checkKey(key: MemoryKey): void {
  if (typeof key.projectId !== "string" || key.projectId === "") invalid("project", "no project");
  if (typeof key.environment !== "string" || key.environment === "") {
    invalid("environment", "no environment");
  }
  checkResourceId(key.resource);
}

export function checkResourceId(id: unknown): asserts id is string {
  if (typeof id !== "string" || !MEMORY_RESOURCE_ID_PATTERN.test(id)) {
    invalid(
      "resource",
      `a resource id is 1-128 lowercase letters and digits with single hyphens between them; got ${JSON.stringify(id)}`,
    );
  }
}

export function checkDocumentId(id: unknown, path = "id"): asserts id is string {
  if (typeof id !== "string" || !MEMORY_DOCUMENT_ID_PATTERN.test(id)) {
    invalid(
      path,
      `a document id is 1-128 ASCII letters, digits, "-" or "_"; got ${JSON.stringify(id)}`,
    );
  }
}

export function checkProvider(provider: MemoryProviderConfig): void {
  if (provider.kind !== "document" && provider.kind !== "http") {
    invalid("provider.kind", `provider kind must be "document" or "http"`);
  }
  const max = provider.maxBytes;
  if (!Number.isInteger(max) || max < 1 || max > MEMORY_LIMITS.maxTextBytes) {
    invalid(
      "provider.maxBytes",
      `maxBytes must be an integer from 1 to ${MEMORY_LIMITS.maxTextBytes}`,
    );
  }
}

function checkString(value: unknown, path: string): string {
  if (typeof value !== "string") invalid(path, `"${path}" must be a string`);
  return value;
}

function checkTitle(value: unknown): string {
  const title = checkString(value, "title");
  const bytes = utf8Bytes(title);
  if (bytes === 0) invalid("title", `"title" must not be empty`);
  if (bytes > MEMORY_LIMITS.titleBytes) tooLarge("title", bytes, MEMORY_LIMITS.titleBytes);
  return title;
}

function checkAgentWrites(value: unknown): AgentWrites {
  if (value !== "enabled" && value !== "disabled") {
    invalid("agentWrites", `"agentWrites" must be "enabled" or "disabled"`);
  }
  return value;
}

/** The sizes of a text change: the first field over its limit, or undefined. */
export function oversized(
  change: { text: string; summary?: string | undefined },
  maxBytes: number,
): { field: "text" | "summary"; bytes: number; maxBytes: number } | undefined {
  const text = utf8Bytes(change.text);
  if (text > maxBytes) return { field: "text", bytes: text, maxBytes };
  if (change.summary !== undefined) {
    const summary = utf8Bytes(change.summary);
    if (summary > MEMORY_LIMITS.summaryBytes) {
      return { field: "summary", bytes: summary, maxBytes: MEMORY_LIMITS.summaryBytes };
    }
  }
  return undefined;
}

export function checkTextChange(change: MemoryTextChange, maxBytes: number): MemoryTextChange {
  const text = checkString(change.text, "text");
  const summary = change.summary === undefined ? undefined : checkString(change.summary, "summary");
  const over = oversized({ text, summary }, maxBytes);
  if (over) tooLarge(over.field, over.bytes, over.maxBytes);
  return summary === undefined ? { text } : { text, summary };
}

export function checkNewDocument(
  doc: NewMemoryDocument,
  maxBytes: number,
): Required<NewMemoryDocument> {
  checkDocumentId(doc.id);
  const title = checkTitle(doc.title);
  const { text, summary } = checkTextChange(
    { text: doc.text ?? "", summary: doc.summary ?? "" },
    maxBytes,
  );
  const agentWrites = checkAgentWrites(doc.agentWrites ?? "enabled");
  return { id: doc.id, title, text, summary: summary ?? "", agentWrites };
}

export function checkPatch(patch: MemoryPatch): MemoryPatch {
  const out: MemoryPatch = {};
  if (patch.title !== undefined) out.title = checkTitle(patch.title);
  if (patch.agentWrites !== undefined) out.agentWrites = checkAgentWrites(patch.agentWrites);
  if (out.title === undefined && out.agentWrites === undefined) {
    invalid("", "a patch changes `title`, `agentWrites` or both");
  }
  return out;
}

export function checkBindings(bindings: readonly NewMemoryBinding[]): void {
  if (bindings.length > MEMORY_LIMITS.bindingsPerSession) {
    throw new MemoryError(
      "memory_limit_exceeded",
      `a session binds at most ${MEMORY_LIMITS.bindingsPerSession} memory resources; got ${bindings.length}`,
      { path: "memory" },
    );
  }
  const seen = new Set<string>();
  for (const b of bindings) {
    checkKey(b);
    if (seen.has(b.resource)) invalid(`memory.${b.resource}`, "a resource is bound once");
    seen.add(b.resource);
    if (b.scope === "collection" ? b.id !== null : b.id === null) {
      invalid(`memory.${b.resource}.id`, "a collection binding has no id; the others need one");
    }
    if (b.id !== null) checkDocumentId(b.id, `memory.${b.resource}.id`);
  }
}

/** Revisions are counters; a client sees them as opaque strings. */
export function parseRevision(revision: string): number | undefined {
  return /^[1-9][0-9]{0,15}$/.test(revision) ? Number(revision) : undefined;
}

/** A list cursor: the last row's update time and id. */
export function encodeCursor(updatedAt: string, id: string): string {
  return Buffer.from(JSON.stringify([updatedAt, id]), "utf8").toString("base64url");
}

export function decodeCursor(cursor: string): { updatedAt: string; id: string } {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
    if (
      Array.isArray(value) &&
      value.length === 2 &&
      typeof value[0] === "string" &&
      typeof value[1] === "string"
    ) {
      return { updatedAt: value[0], id: value[1] };
    }
  } catch {
    // fall through
  }
  throw new MemoryError("invalid_cursor", "this cursor was not handed out by this list", {
    path: "cursor",
  });
}

export function clampLimit(limit: number): number {
  if (!Number.isInteger(limit) || limit < 1 || limit > MEMORY_LIMITS.listPage) {
    invalid("limit", `limit must be an integer from 1 to ${MEMORY_LIMITS.listPage}`);
  }
  return limit;
}
