// The limits of memory, in one place: the SDK checks declarations against them, the runtime's
// memory store and the API check documents and bindings against them (docs/memory.md).

export const MEMORY_LIMITS = {
  /** A document's text, by default; a resource's `maxBytes` may be 1..maxTextBytes. */
  defaultTextBytes: 8_192,
  maxTextBytes: 16_384,
  titleBytes: 240,
  summaryBytes: 240,
  /** A mutation's JSON body (API). */
  bodyBytes: 65_536,
  bindingsPerSession: 8,
  /** A collection's overview: whole entries, at most this many, within overviewBytes. */
  overviewEntries: 50,
  overviewBytes: 16_384,
  listPage: 50,
  /** Documents one resource may hold (deleted ones included: their ids stay reserved). */
  documentsPerResource: 10_000,
  /** Resources one project environment may hold. */
  resourcesPerEnvironment: 100,
  descriptionBytes: 1_024,
  /** HTTP providers. */
  httpToolsPerResource: 8,
  httpRequestBytes: 65_536,
  httpResponseBytes: 65_536,
  httpSources: 100,
  httpIdBytes: 1_024,
} as const;

/** 1–128 lowercase letters and digits, single hyphens between them. */
export const MEMORY_RESOURCE_ID_PATTERN = /^(?=.{1,128}$)[a-z0-9]+(-[a-z0-9]+)*$/;
/** 1–128 ASCII letters, digits, "-" and "_" (documents and namespaces). */
export const MEMORY_DOCUMENT_ID_PATTERN = /^[A-Za-z0-9_-]{1,128}$/;
/** An HTTP provider's tool name, as the endpoint knows it (the model sees `memory_<name>`). */
export const MEMORY_HTTP_TOOL_PATTERN = /^[a-z0-9_]{1,32}$/;

export function utf8Bytes(text: string): number {
  return Buffer.byteLength(text, "utf8");
}
