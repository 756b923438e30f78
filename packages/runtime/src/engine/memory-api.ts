// The owner's memory API (`runtime.memory`): what the management API's
// `/projects/<p>/memory/...` routes and the CLI call. Every method is scoped by project and
// environment; revisions are checked in the store, in the same transaction as the write.

import { MEMORY_LIMITS } from "@opencomputer/agent/internal";
import type {
  MemoryDocument,
  MemoryDocumentMeta,
  MemoryResourceView,
} from "@opencomputer/protocol";
import { MemoryError } from "../ports/memory-errors.ts";
import { checkResourceId } from "../ports/memory-rules.ts";
import type {
  MemoryDocumentRecord,
  MemoryKey,
  MemoryPatch,
  MemoryStore,
  MemoryTextChange,
  NewMemoryDocument,
} from "../ports/memory-store.ts";

export interface MemoryScopeRef {
  projectId: string;
  environment: string;
}

/** The owner's operations on memory documents. Errors are MemoryErrors (memory-errors.ts). */
export interface MemoryApi {
  resources(scope: MemoryScopeRef): Promise<MemoryResourceView[]>;
  list(
    key: MemoryKey,
    page?: { limit?: number; cursor?: string },
  ): Promise<{ documents: MemoryDocumentMeta[]; nextCursor: string | null }>;
  get(key: MemoryKey, id: string): Promise<MemoryDocument>;
  /** Registers the resource (as document memory, not declared) when no deployment has yet. */
  create(key: MemoryKey, doc: NewMemoryDocument): Promise<MemoryDocument>;
  replace(
    key: MemoryKey,
    id: string,
    change: MemoryTextChange,
    revision: string,
  ): Promise<MemoryDocument>;
  patch(key: MemoryKey, id: string, patch: MemoryPatch, revision: string): Promise<MemoryDocument>;
  remove(key: MemoryKey, id: string, revision: string): Promise<void>;
}

export function createMemoryApi(memory: MemoryStore): MemoryApi {
  const live = async (key: MemoryKey, id: string) => {
    const doc = await memory.getDocument(key, id);
    if (!doc || doc.deleted) {
      throw new MemoryError(
        "not_found",
        doc
          ? `the document ${JSON.stringify(id)} of ${key.resource} was deleted`
          : `no document ${JSON.stringify(id)} in ${key.resource} (${key.environment})`,
        { path: "id" },
      );
    }
    return doc;
  };
  return {
    async resources({ projectId, environment }) {
      const rows = await memory.listResources(projectId, environment);
      return rows.map((r) => ({
        id: r.id,
        provider: r.provider,
        declared: r.declared,
        documents: r.documents,
      }));
    },
    async list(key, page = {}) {
      checkResourceId(key.resource);
      const found = await memory.listDocuments(key, {
        limit: page.limit ?? MEMORY_LIMITS.listPage,
        ...(page.cursor ? { cursor: page.cursor } : {}),
      });
      return { documents: found.documents.map(toMeta), nextCursor: found.nextCursor };
    },
    get: async (key, id) => toDocument(await live(key, id)),
    async create(key, doc) {
      checkResourceId(key.resource);
      if (!(await memory.getResource(key.projectId, key.environment, key.resource))) {
        await memory.putResource(
          key.projectId,
          key.environment,
          key.resource,
          { kind: "document", maxBytes: MEMORY_LIMITS.defaultTextBytes },
          false,
        );
      }
      return toDocument(await memory.createDocument(key, doc, { kind: "owner" }));
    },
    replace: async (key, id, change, revision) =>
      toDocument(await memory.replaceDocument(key, id, change, revision)),
    patch: async (key, id, patch, revision) =>
      toDocument(await memory.patchDocument(key, id, patch, revision)),
    remove: (key, id, revision) => memory.deleteDocument(key, id, revision),
  };
}

function toMeta(doc: MemoryDocumentRecord): MemoryDocumentMeta {
  return {
    id: doc.id,
    title: doc.title,
    summary: doc.summary,
    agentWrites: doc.agentWrites,
    revision: doc.revision,
    bytes: doc.bytes,
    maxBytes: doc.maxBytes,
    updatedAt: doc.updatedAt,
    writer: doc.writer,
  };
}

function toDocument(doc: MemoryDocumentRecord): MemoryDocument {
  return { ...toMeta(doc), text: doc.text };
}
