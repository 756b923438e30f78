// The MemoryStore port: memory documents that outlive sessions, kept per project, environment
// and resource, with revisions for compare-and-set, a frozen flag, and the bindings each session
// was created with. A port of its own (not part of Store): memory has its own lifetime and
// owner, and a runtime without it still runs every agent that binds no memory.
// Conformance: @opencomputer/testkit/memory-conformance, run by store-sqlite and store-postgres.

import type { AgentWrites, MemoryAccess, MemoryScope, MemoryWriter } from "@opencomputer/protocol";

export type { AgentWrites, MemoryAccess, MemoryScope, MemoryWriter };

/** Where documents live: one resource of one project environment. */
export interface MemoryKey {
  projectId: string;
  environment: string;
  resource: string;
}

export interface MemoryProviderConfig {
  kind: "document" | "http";
  maxBytes: number;
}

export interface MemoryResourceRecord {
  projectId: string;
  environment: string;
  id: string;
  provider: MemoryProviderConfig;
  /** Whether a deployment declared it (false: registered by an owner's first document). */
  declared: boolean;
  /** Documents not deleted. */
  documents: number;
  createdAt: string;
  updatedAt: string;
}

export interface MemoryDocumentRecord {
  id: string;
  title: string;
  text: string;
  summary: string;
  agentWrites: AgentWrites;
  /** Opaque to clients; grows with every change (deletion included). */
  revision: string;
  bytes: number;
  /** The resource's current text limit. */
  maxBytes: number;
  updatedAt: string;
  writer: MemoryWriter;
  /** A deleted document keeps its id (reserved) and loses title, text and summary. */
  deleted: boolean;
}

export interface NewMemoryDocument {
  id: string;
  title: string;
  text?: string;
  summary?: string;
  agentWrites?: AgentWrites;
}

/** A replacement of the text; an omitted summary is kept, "" clears it. */
export interface MemoryTextChange {
  text: string;
  summary?: string;
}

export interface MemoryPatch {
  title?: string;
  agentWrites?: AgentWrites;
}

export interface MemoryBindingRecord {
  sessionId: string;
  projectId: string;
  environment: string;
  resource: string;
  scope: MemoryScope;
  /** The document or namespace; null for a collection. */
  id: string | null;
  access: MemoryAccess;
  /** Set when the session ended: agent saves through this binding are refused from then on. */
  revokedAt: string | null;
}

export type NewMemoryBinding = Omit<MemoryBindingRecord, "sessionId" | "revokedAt">;

/** What an agent's save came to. Only `saved` changed anything. */
export type AgentSaveOutcome =
  | { status: "saved"; document: MemoryDocumentRecord }
  | { status: "conflict"; document: MemoryDocumentRecord }
  | { status: "rejected"; reason: "agent_writes_disabled" | "not_found" | "session_closed" }
  | {
      status: "rejected";
      reason: "too_large";
      field: "text" | "summary";
      bytes: number;
      maxBytes: number;
    };

export interface MemoryPage {
  /** Newest update first, then id; `text` is "" in list rows. */
  documents: MemoryDocumentRecord[];
  nextCursor: string | null;
}

/**
 * Every method refuses bad input with a MemoryError (memory-errors.ts) and writes nothing then.
 * Every write checks its revision and writes in one transaction, so of two writers holding the
 * same revision exactly one succeeds.
 */
export interface MemoryStore {
  /**
   * Registers a resource, or updates its limit (lowering it truncates nothing). Changing the
   * kind is refused (`memory_kind_changed`); more than `resourcesPerEnvironment` is refused.
   * `declared` (default true) marks a deployment's declaration; once true it stays true.
   */
  putResource(
    projectId: string,
    environment: string,
    id: string,
    provider: MemoryProviderConfig,
    declared?: boolean,
  ): Promise<MemoryResourceRecord>;
  getResource(
    projectId: string,
    environment: string,
    id: string,
  ): Promise<MemoryResourceRecord | undefined>;
  listResources(projectId: string, environment: string): Promise<MemoryResourceRecord[]>;

  /** `not_found` (no resource), `precondition_failed` (the id was ever used), size limits. */
  createDocument(
    key: MemoryKey,
    doc: NewMemoryDocument,
    writer: MemoryWriter,
  ): Promise<MemoryDocumentRecord>;
  /** Deleted documents too (`deleted: true`); undefined when the id was never used. */
  getDocument(key: MemoryKey, id: string): Promise<MemoryDocumentRecord | undefined>;
  /** Documents not deleted; `invalid_cursor` for a cursor this store did not hand out. */
  listDocuments(key: MemoryKey, page: { limit: number; cursor?: string }): Promise<MemoryPage>;
  /** The owner's replacement; `precondition_failed` unless `expectRevision` is current. */
  replaceDocument(
    key: MemoryKey,
    id: string,
    change: MemoryTextChange,
    expectRevision: string,
  ): Promise<MemoryDocumentRecord>;
  patchDocument(
    key: MemoryKey,
    id: string,
    patch: MemoryPatch,
    expectRevision: string,
  ): Promise<MemoryDocumentRecord>;
  deleteDocument(key: MemoryKey, id: string, expectRevision: string): Promise<void>;

  /**
   * An agent's save through a session's binding, checked and written in one transaction: the
   * binding must be live (not revoked), the document present and not frozen, the revision
   * current (else `conflict` with the current document) and the sizes within limits.
   */
  saveByAgent(
    sessionId: string,
    key: MemoryKey,
    id: string,
    change: MemoryTextChange,
    expectRevision: string,
  ): Promise<AgentSaveOutcome>;

  /**
   * Records a session's bindings (at most `bindingsPerSession`). Binding the same session again
   * with the same bindings is a no-op; with others, `conflict`.
   */
  bindSession(sessionId: string, bindings: readonly NewMemoryBinding[]): Promise<void>;
  /** In the order they were bound. */
  sessionBindings(sessionId: string): Promise<MemoryBindingRecord[]>;
  /** Revokes the session's bindings: no agent save through them commits afterwards. */
  revokeSession(sessionId: string): Promise<void>;
}
