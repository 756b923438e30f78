// Memory as the management API returns it: documents of a resource, the resource inventory, and
// a session's bindings (GET /sessions/<id> `memory`). See docs/memory.md.

import {
  array,
  boolean,
  type Infer,
  integer,
  literal,
  named,
  nullable,
  object,
  oneOf,
  optional,
  string,
  union,
} from "../shape.ts";

export const MEMORY_SCOPES = ["document", "collection", "namespace"] as const;
export type MemoryScope = (typeof MEMORY_SCOPES)[number];

export const MEMORY_ACCESS = ["read", "read-write"] as const;
export type MemoryAccess = (typeof MEMORY_ACCESS)[number];

export const AGENT_WRITES = ["enabled", "disabled"] as const;
export type AgentWrites = (typeof AGENT_WRITES)[number];

/** Who wrote a document last: its owner (API, CLI) or an agent in a session. */
export const memoryWriterShape = named(
  "MemoryWriter",
  union([
    object({ kind: literal("owner") }),
    object({ kind: literal("agent"), sessionId: string() }),
  ]),
);
export type MemoryWriter = Infer<typeof memoryWriterShape>;

const documentMetaFields = {
  id: string(),
  title: string(),
  summary: string(),
  agentWrites: oneOf(AGENT_WRITES),
  /** Opaque; send it back verbatim in `If-Match`. */
  revision: string(),
  /** UTF-8 bytes of `text`. */
  bytes: integer(),
  /** The resource's current text limit. */
  maxBytes: integer(),
  updatedAt: string(),
  writer: memoryWriterShape,
};

/** `GET /projects/<p>/memory/<r>/documents/<id>`. */
export const memoryDocumentShape = object({ ...documentMetaFields, text: string() });
export type MemoryDocument = Infer<typeof memoryDocumentShape>;

/** A row of a document list: the document without its text. */
export const memoryDocumentMetaShape = object(documentMetaFields);
export type MemoryDocumentMeta = Infer<typeof memoryDocumentMetaShape>;

/** `GET /projects/<p>/memory`: one resource of the inventory. */
export const memoryResourceShape = object({
  id: string(),
  provider: object({ kind: oneOf(["document", "http"]), maxBytes: integer() }),
  /** Whether a deployment this runtime knows declares it. */
  declared: boolean(),
  /** Documents not deleted. */
  documents: integer(),
});
export type MemoryResourceView = Infer<typeof memoryResourceShape>;

/** One of a session's memory bindings, as `GET /sessions/<id>` shows it. */
export const memoryBindingViewShape = named(
  "MemoryBinding",
  object({
    resource: string(),
    scope: oneOf(MEMORY_SCOPES),
    /** The document (scope `document`) or namespace (scope `namespace`). */
    id: optional(string()),
    access: oneOf(MEMORY_ACCESS),
    /** Whether an agent save could commit now: false for read bindings, frozen or deleted documents, ended sessions. */
    writable: boolean(),
    /** Namespace bindings: the opaque key the provider partitions by. */
    partition: optional(string()),
  }),
);
export type MemoryBindingView = Infer<typeof memoryBindingViewShape>;

/** One document a projection was made from (`useMemory().sources`). */
export const memorySourceShape = named(
  "MemorySource",
  object({
    id: string(),
    title: optional(string()),
    revision: optional(string()),
    updatedAt: optional(nullable(string())),
  }),
);
export type MemorySourceView = Infer<typeof memorySourceShape>;

export const memoryDocumentListShape = object({
  documents: array(memoryDocumentMetaShape),
  nextCursor: nullable(string()),
});
