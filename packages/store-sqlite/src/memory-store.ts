// The MemoryStore port on the SqliteStore's own file and connection: every write is one change
// of that store (its transaction, its commit journal), so memory is as durable as the sessions
// and two processes on the file serialise on SQLite's write lock.

import {
  type AgentSaveOutcome,
  isoNow,
  type MemoryBindingRecord,
  type MemoryDocumentRecord,
  MemoryError,
  type MemoryKey,
  type MemoryPage,
  type MemoryPatch,
  type MemoryProviderConfig,
  type MemoryResourceRecord,
  type MemoryStore,
  type MemoryTextChange,
  type MemoryWriter,
  memoryErrors,
  type NewMemoryBinding,
  type NewMemoryDocument,
  memoryRules as rules,
} from "@opencomputer/runtime";
import {
  type BindingRow,
  bindingFromRow,
  documentFromRow,
  type MemoryDocumentRow,
  type MemoryResourceRow,
  resourceFromRow,
  sameBindings,
} from "@opencomputer/sql-store";
import type { SqliteStore } from "./sqlite-store.ts";
import type { StatementCache } from "./statements.ts";

const RESOURCE = `SELECT r.*, (SELECT count(*) FROM memory_documents d WHERE d.project_id = r.project_id
  AND d.environment = r.environment AND d.resource = r.id AND d.deleted = 0) AS documents
  FROM memory_resources r`;
const DOCUMENT = `SELECT d.*, r.max_bytes FROM memory_documents d JOIN memory_resources r
  ON r.project_id = d.project_id AND r.environment = d.environment AND r.id = d.resource`;
const WHERE_DOC = "d.project_id = ? AND d.environment = ? AND d.resource = ? AND d.id = ?";
const UPDATE_TEXT = `UPDATE memory_documents SET text = ?, summary = ?, bytes = ?, writer = ?,
  revision = revision + 1, updated_at = ?
  WHERE project_id = ? AND environment = ? AND resource = ? AND id = ? AND revision = ?`;

export class SqliteMemoryStore implements MemoryStore {
  constructor(private readonly store: SqliteStore) {}

  async putResource(
    projectId: string,
    environment: string,
    id: string,
    provider: MemoryProviderConfig,
    declared = true,
  ): Promise<MemoryResourceRecord> {
    rules.checkKey({ projectId, environment, resource: id });
    rules.checkProvider(provider);
    return this.store.change((s) => {
      const existing = readResource(s, projectId, environment, id);
      const now = isoNow();
      if (existing) {
        if (existing.provider.kind !== provider.kind)
          throw memoryErrors.kindChanged(id, existing, provider);
        if (existing.provider.maxBytes !== provider.maxBytes || (declared && !existing.declared)) {
          s.get(
            "UPDATE memory_resources SET max_bytes = ?, declared = max(declared, ?), updated_at = ? WHERE project_id = ? AND environment = ? AND id = ?",
          ).run(provider.maxBytes, declared ? 1 : 0, now, projectId, environment, id);
        }
      } else {
        const count = s
          .get("SELECT count(*) FROM memory_resources WHERE project_id = ? AND environment = ?")
          .pluck()
          .get(projectId, environment) as number;
        if (count >= rules.MEMORY_LIMITS.resourcesPerEnvironment)
          throw memoryErrors.tooManyResources();
        s.get(
          "INSERT INTO memory_resources (project_id, environment, id, kind, max_bytes, declared, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        ).run(
          projectId,
          environment,
          id,
          provider.kind,
          provider.maxBytes,
          declared ? 1 : 0,
          now,
          now,
        );
      }
      return readResource(s, projectId, environment, id)!;
    });
  }

  async getResource(projectId: string, environment: string, id: string) {
    return this.store.read((s) => readResource(s, projectId, environment, id));
  }

  async listResources(projectId: string, environment: string): Promise<MemoryResourceRecord[]> {
    const rows = this.store.read(
      (s) =>
        s
          .get(`${RESOURCE} WHERE r.project_id = ? AND r.environment = ? ORDER BY r.id`)
          .all(projectId, environment) as MemoryResourceRow[],
    );
    return rows.map(resourceFromRow);
  }

  async createDocument(key: MemoryKey, doc: NewMemoryDocument, writer: MemoryWriter) {
    rules.checkKey(key);
    return this.store.change((s) => {
      const resource = mustResource(s, key);
      const clean = rules.checkNewDocument(doc, resource.provider.maxBytes);
      if (readDocument(s, key, clean.id)) throw memoryErrors.idUsed(clean.id);
      const count = s
        .get(
          "SELECT count(*) FROM memory_documents WHERE project_id = ? AND environment = ? AND resource = ?",
        )
        .pluck()
        .get(key.projectId, key.environment, key.resource) as number;
      if (count >= rules.MEMORY_LIMITS.documentsPerResource)
        throw memoryErrors.tooManyDocuments(key.resource);
      s.get(
        `INSERT INTO memory_documents (project_id, environment, resource, id, title, text, summary,
          agent_writes, revision, bytes, writer, deleted, updated_at)
          VALUES (?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?, 0, ?)`,
      ).run(
        key.projectId,
        key.environment,
        key.resource,
        clean.id,
        clean.title,
        clean.text,
        clean.summary,
        clean.agentWrites,
        Buffer.byteLength(clean.text, "utf8"),
        JSON.stringify(writer),
        isoNow(),
      );
      return readDocument(s, key, clean.id)!;
    });
  }

  async getDocument(key: MemoryKey, id: string) {
    return this.store.read((s) => readDocument(s, key, id));
  }

  async listDocuments(
    key: MemoryKey,
    page: { limit: number; cursor?: string },
  ): Promise<MemoryPage> {
    const limit = rules.clampLimit(page.limit);
    const after = page.cursor === undefined ? undefined : rules.decodeCursor(page.cursor);
    const base = `${DOCUMENT} WHERE d.project_id = ? AND d.environment = ? AND d.resource = ? AND d.deleted = 0`;
    const rows = this.store.read((s) =>
      after
        ? (s
            .get(
              `${base} AND (d.updated_at < ? OR (d.updated_at = ? AND d.id > ?)) ORDER BY d.updated_at DESC, d.id LIMIT ?`,
            )
            .all(
              key.projectId,
              key.environment,
              key.resource,
              after.updatedAt,
              after.updatedAt,
              after.id,
              limit + 1,
            ) as MemoryDocumentRow[])
        : (s
            .get(`${base} ORDER BY d.updated_at DESC, d.id LIMIT ?`)
            .all(key.projectId, key.environment, key.resource, limit + 1) as MemoryDocumentRow[]),
    );
    const documents = rows.slice(0, limit).map((row) => ({ ...documentFromRow(row), text: "" }));
    const last = documents[documents.length - 1];
    return {
      documents,
      nextCursor: rows.length > limit && last ? rules.encodeCursor(last.updatedAt, last.id) : null,
    };
  }

  async replaceDocument(
    key: MemoryKey,
    id: string,
    change: MemoryTextChange,
    expectRevision: string,
  ): Promise<MemoryDocumentRecord> {
    rules.checkKey(key);
    return this.store.change((s) => {
      const doc = mustCurrent(s, key, id, expectRevision);
      const clean = rules.checkTextChange(change, doc.maxBytes);
      writeText(s, key, doc, clean, { kind: "owner" });
      return readDocument(s, key, id)!;
    });
  }

  async patchDocument(key: MemoryKey, id: string, patch: MemoryPatch, expectRevision: string) {
    rules.checkKey(key);
    const clean = rules.checkPatch(patch);
    return this.store.change((s) => {
      const doc = mustCurrent(s, key, id, expectRevision);
      s.get(
        `UPDATE memory_documents SET title = ?, agent_writes = ?, revision = revision + 1, updated_at = ?
          WHERE project_id = ? AND environment = ? AND resource = ? AND id = ?`,
      ).run(
        clean.title ?? doc.title,
        clean.agentWrites ?? doc.agentWrites,
        isoNow(),
        key.projectId,
        key.environment,
        key.resource,
        id,
      );
      return readDocument(s, key, id)!;
    });
  }

  async deleteDocument(key: MemoryKey, id: string, expectRevision: string): Promise<void> {
    rules.checkKey(key);
    this.store.change((s) => {
      mustCurrent(s, key, id, expectRevision);
      s.get(
        `UPDATE memory_documents SET title = '', text = '', summary = '', bytes = 0, deleted = 1,
          revision = revision + 1, updated_at = ?
          WHERE project_id = ? AND environment = ? AND resource = ? AND id = ?`,
      ).run(isoNow(), key.projectId, key.environment, key.resource, id);
    });
  }

  async saveByAgent(
    sessionId: string,
    key: MemoryKey,
    id: string,
    change: MemoryTextChange,
    expectRevision: string,
  ): Promise<AgentSaveOutcome> {
    rules.checkKey(key);
    return this.store.change((s): AgentSaveOutcome => {
      const live = s
        .get(
          "SELECT revoked_at FROM memory_bindings WHERE session_id = ? AND project_id = ? AND environment = ? AND resource = ? AND scope = 'document' AND doc_id = ? AND access = 'read-write'",
        )
        .get(sessionId, key.projectId, key.environment, key.resource, id) as
        | { revoked_at: string | null }
        | undefined;
      if (!live || live.revoked_at !== null)
        return { status: "rejected", reason: "session_closed" };
      const doc = readDocument(s, key, id);
      if (!doc || doc.deleted) return { status: "rejected", reason: "not_found" };
      if (doc.agentWrites === "disabled") {
        return { status: "rejected", reason: "agent_writes_disabled" };
      }
      const over = rules.oversized(change, doc.maxBytes);
      if (over) return { status: "rejected", reason: "too_large", ...over };
      if (doc.revision !== expectRevision) return { status: "conflict", document: doc };
      writeText(s, key, doc, change, { kind: "agent", sessionId });
      return { status: "saved", document: readDocument(s, key, id)! };
    });
  }

  async bindSession(sessionId: string, bindings: readonly NewMemoryBinding[]): Promise<void> {
    rules.checkBindings(bindings);
    this.store.change((s) => {
      const existing = bindingsOf(s, sessionId);
      if (existing.length > 0) {
        if (!sameBindings(existing, bindings)) {
          throw new MemoryError(
            "conflict",
            `session ${sessionId} is already bound to other memory`,
            { path: "memory" },
          );
        }
        return;
      }
      bindings.forEach((b, position) => {
        s.get(
          `INSERT INTO memory_bindings (session_id, position, project_id, environment, resource, scope,
            doc_id, access, revoked_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, NULL)`,
        ).run(sessionId, position, b.projectId, b.environment, b.resource, b.scope, b.id, b.access);
      });
    });
  }

  async sessionBindings(sessionId: string): Promise<MemoryBindingRecord[]> {
    return this.store.read((s) => bindingsOf(s, sessionId));
  }

  async revokeSession(sessionId: string): Promise<void> {
    this.store.change((s) => {
      s.get(
        "UPDATE memory_bindings SET revoked_at = ? WHERE session_id = ? AND revoked_at IS NULL",
      ).run(isoNow(), sessionId);
    });
  }
}

export function createSqliteMemoryStore(store: SqliteStore): SqliteMemoryStore {
  return new SqliteMemoryStore(store);
}

function readResource(s: StatementCache, projectId: string, environment: string, id: string) {
  const row = s
    .get(`${RESOURCE} WHERE r.project_id = ? AND r.environment = ? AND r.id = ?`)
    .get(projectId, environment, id) as MemoryResourceRow | undefined;
  return row ? resourceFromRow(row) : undefined;
}

function mustResource(s: StatementCache, key: MemoryKey): MemoryResourceRecord {
  const resource = readResource(s, key.projectId, key.environment, key.resource);
  if (!resource) throw memoryErrors.noResource(key.resource);
  return resource;
}

function readDocument(s: StatementCache, key: MemoryKey, id: string) {
  const row = s
    .get(`${DOCUMENT} WHERE ${WHERE_DOC}`)
    .get(key.projectId, key.environment, key.resource, id) as MemoryDocumentRow | undefined;
  return row ? documentFromRow(row) : undefined;
}

/** The live document at `expectRevision`, or the refusal. */
function mustCurrent(s: StatementCache, key: MemoryKey, id: string, expectRevision: string) {
  rules.checkDocumentId(id);
  const doc = readDocument(s, key, id);
  if (!doc || doc.deleted) throw memoryErrors.noDocument(key.resource, id);
  if (doc.revision !== expectRevision) throw memoryErrors.staleRevision(id, doc.revision);
  return doc;
}

function writeText(
  s: StatementCache,
  key: MemoryKey,
  doc: MemoryDocumentRecord,
  change: MemoryTextChange,
  writer: MemoryWriter,
): void {
  s.get(UPDATE_TEXT).run(
    change.text,
    change.summary ?? doc.summary,
    Buffer.byteLength(change.text, "utf8"),
    JSON.stringify(writer),
    isoNow(),
    key.projectId,
    key.environment,
    key.resource,
    doc.id,
    Number(doc.revision),
  );
}

function bindingsOf(s: StatementCache, sessionId: string): MemoryBindingRecord[] {
  const rows = s
    .get("SELECT * FROM memory_bindings WHERE session_id = ? ORDER BY position")
    .all(sessionId) as BindingRow[];
  return rows.map(bindingFromRow);
}
