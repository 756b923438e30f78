import { integer, object, string } from "../shape.ts";

/**
 * Memory the session changed. Reported best-effort: the save commits in the memory store on its
 * own, so a reader treats the event as a hint to read the document again.
 */
export const memoryEvents = {
  "memory.saved": object({
    resource: string(),
    documentId: string(),
    revision: string(),
    bytes: integer(),
  }),
};
