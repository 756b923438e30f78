import { integer, object, optional, string } from "../shape.ts";

/**
 * Memory the session changed. Reported best-effort: the save commits in the memory store on its
 * own, so a reader treats the event as a hint to read the document again. A write tool of an
 * HTTP provider reports too: `documentId` is then the bound namespace, `revision` the provider's
 * `result.revision` (else the operation id), `bytes` the size of the arguments sent, and `tool`
 * the provider's tool.
 */
export const memoryEvents = {
  "memory.saved": object({
    resource: string(),
    documentId: string(),
    revision: string(),
    bytes: integer(),
    tool: optional(string()),
  }),
};
