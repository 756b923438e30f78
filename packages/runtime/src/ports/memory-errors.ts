import { OpenComputerError } from "@opencomputer/agent";
import { MEMORY_LIMITS } from "@opencomputer/agent/internal";
import type { MemoryProviderConfig, MemoryResourceRecord } from "./memory-store.ts";

/**
 * A memory operation refused; nothing was written. Codes (with the API status):
 * `invalid_request` 400, `invalid_cursor` 400, `not_found` 404, `conflict` 409,
 * `memory_kind_changed` 409, `precondition_failed` 412 (stale revision, an id already used),
 * `memory_limit_exceeded` 413 (a size or a count), `precondition_required` 428.
 * `details.path` names the field at fault.
 */
export class MemoryError extends OpenComputerError {}

export const MEMORY_ERROR_STATUS: Record<string, number> = {
  invalid_request: 400,
  invalid_cursor: 400,
  not_found: 404,
  conflict: 409,
  memory_kind_changed: 409,
  precondition_failed: 412,
  memory_limit_exceeded: 413,
  precondition_required: 428,
};

// The refusals both SQL stores make, worded once.

export function noResource(resource: string): MemoryError {
  return new MemoryError(
    "not_found",
    `no memory resource ${JSON.stringify(resource)} in this project environment; a deployment that declares it with defineMemory() registers it`,
    { path: "resource" },
  );
}

export function noDocument(resource: string, id: string): MemoryError {
  return new MemoryError("not_found", `no document ${JSON.stringify(id)} in ${resource}`, {
    path: "id",
  });
}

export function idUsed(id: string): MemoryError {
  return new MemoryError(
    "precondition_failed",
    `the document id ${JSON.stringify(id)} is already used (deleted ids stay reserved); choose another id`,
    { path: "id" },
  );
}

export function staleRevision(id: string, current: string): MemoryError {
  return new MemoryError(
    "precondition_failed",
    `document ${JSON.stringify(id)} is at revision ${current}, not the one given; read it again and reconcile`,
    { path: "If-Match", revision: current },
  );
}

export function kindChanged(
  id: string,
  existing: MemoryResourceRecord,
  provider: MemoryProviderConfig,
): MemoryError {
  return new MemoryError(
    "memory_kind_changed",
    `memory resource ${JSON.stringify(id)} is kept by a ${existing.provider.kind} provider; it cannot become ${provider.kind}: declare a new resource id and move the data`,
    { path: "provider.kind" },
  );
}

export function tooManyResources(): MemoryError {
  return new MemoryError(
    "memory_limit_exceeded",
    `a project environment holds at most ${MEMORY_LIMITS.resourcesPerEnvironment} memory resources`,
    { path: "resource" },
  );
}

export function tooManyDocuments(resource: string): MemoryError {
  return new MemoryError(
    "memory_limit_exceeded",
    `${resource} holds ${MEMORY_LIMITS.documentsPerResource} documents (deleted ones included), its limit`,
    { path: "id" },
  );
}
