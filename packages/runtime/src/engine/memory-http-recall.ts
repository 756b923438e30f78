// Recall from an HTTP memory provider for one model request: the `recall` operation with the
// binding's partition and access and the turn input's text, and the answer checked against the
// protocol (text within the declared maxBytes, at most 100 sources, bounded ids and cursor)
// before the render sees it. A failure blocks the step; a render never runs on partial memory.

import { randomUUID } from "node:crypto";
import type { JsonValue, MemoryProjection } from "@opencomputer/agent";
import { utf8Bytes } from "@opencomputer/agent/internal";
import type { MemoryBindingRecord } from "../ports/memory-store.ts";
import {
  callProvider,
  HTTP_MEMORY_LIMITS,
  type HttpMemoryDeclaration,
  MemoryProviderError,
} from "./memory-http.ts";
import { partitionKey } from "./memory-partition.ts";
import type { TurnScope } from "./turn-scope.ts";

export interface HttpRecall {
  projection: MemoryProjection;
  /** The provider's read state, given back to the tools of this model request. */
  cursor?: string;
}

export async function recallNamespace(
  scope: TurnScope,
  binding: MemoryBindingRecord,
  declaration: HttpMemoryDeclaration,
): Promise<HttpRecall> {
  const text = scope.turn.input.text;
  const answer = await callProvider(
    scope,
    declaration,
    {
      operation: "recall",
      operationId: `mrq_${randomUUID()}:${binding.resource}`,
      partition: partitionKey(binding),
      access: binding.access,
      input: { text: typeof text === "string" ? text : null },
      maxBytes: declaration.provider.maxBytes,
    },
    true,
  );
  return parseRecall(answer.body, declaration, binding);
}

function parseRecall(
  body: JsonValue,
  declaration: HttpMemoryDeclaration,
  binding: MemoryBindingRecord,
): HttpRecall {
  const resource = declaration.id;
  const invalid = (path: string, why: string) =>
    new MemoryProviderError(
      "memory_provider_invalid",
      `memory ${resource}: the provider's recall answer is invalid at ${path}: ${why}`,
      { path, resource },
    );
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw invalid("response", "expected a JSON object { text, sources, cursor? }");
  }
  const { text, sources, cursor } = body;
  if (typeof text !== "string") throw invalid("text", "must be a string");
  const bytes = utf8Bytes(text);
  if (bytes > declaration.provider.maxBytes) {
    throw new MemoryProviderError(
      "memory_provider_too_large",
      `memory ${resource}: the provider recalled ${bytes} bytes of text; the declaration's maxBytes is ${declaration.provider.maxBytes}`,
      { path: "text", resource },
    );
  }
  if (!Array.isArray(sources)) throw invalid("sources", "must be an array");
  if (sources.length > HTTP_MEMORY_LIMITS.sources) {
    throw invalid(
      "sources",
      `at most ${HTTP_MEMORY_LIMITS.sources} sources; got ${sources.length}`,
    );
  }
  const parsed = sources.map((raw, i) => {
    const at = `sources[${i}]`;
    if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
      throw invalid(at, "must be an object { id, title?, revision?, updatedAt? }");
    }
    const id = boundedString(raw.id, `${at}.id`, invalid);
    if (id === undefined) throw invalid(`${at}.id`, "must be a string");
    const source: { id: string; title?: string; revision?: string; updatedAt?: string } = { id };
    for (const key of ["title", "revision", "updatedAt"] as const) {
      const value = boundedString(raw[key], `${at}.${key}`, invalid);
      if (value !== undefined) source[key] = value;
    }
    if (source.updatedAt !== undefined && Number.isNaN(Date.parse(source.updatedAt))) {
      throw invalid(`${at}.updatedAt`, "must be an ISO 8601 timestamp");
    }
    return source;
  });
  const kept = boundedString(cursor, "cursor", invalid);
  return {
    projection: {
      text,
      sources: parsed,
      writable: binding.access === "read-write" && binding.revokedAt === null,
    },
    ...(kept !== undefined ? { cursor: kept } : {}),
  };
}

function boundedString(
  value: JsonValue | undefined,
  path: string,
  invalid: (path: string, why: string) => Error,
): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string") throw invalid(path, "must be a string");
  if (utf8Bytes(value) > HTTP_MEMORY_LIMITS.idBytes) {
    throw invalid(path, `longer than ${HTTP_MEMORY_LIMITS.idBytes} bytes`);
  }
  return value;
}
