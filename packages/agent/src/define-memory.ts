// `defineMemory` declares a memory resource: a name the session's bindings refer to, guidance
// for the model's memory tools, and the provider that keeps the data (documents in the runtime's
// store, or the author's own service over a connection). Checked when the module loads, naming
// the field at fault, as defineTool and defineConnection do.

import { type Connection, connectionDeclaration, isConnection } from "./define-connection.ts";
import { describeValue } from "./describe-value.ts";
import { suggestKey } from "./did-you-mean.ts";
import { OpenComputerError } from "./errors.ts";
import { frozenSchemaCopy } from "./freeze.ts";
import { assertJsonCompatible } from "./json-compatible.ts";
import {
  MEMORY_HTTP_TOOL_PATTERN,
  MEMORY_LIMITS,
  MEMORY_RESOURCE_ID_PATTERN,
  utf8Bytes,
} from "./memory-limits.ts";
import { findSchemaProblem } from "./schema-check.ts";
import type { JsonSchema } from "./types.ts";

const MEMORY_BRAND = Symbol.for("opencomputer.memory");
const PROVIDER_BRAND = Symbol.for("opencomputer.memoryProvider");

/** Documents kept by the runtime: bounded text with a title, a summary and revisions. */
export interface DocumentMemoryProvider {
  readonly kind: "document";
  readonly maxBytes: number;
}

/** A tool an HTTP memory provider offers the model as `memory_<name>`. */
export interface HttpMemoryTool {
  readonly name: string;
  readonly description: string;
  /** `write` tools are offered to read-write bindings only. */
  readonly access: "read" | "write";
  /** Whether the endpoint deduplicates retries by operation id (write tools are only retried then). */
  readonly idempotent: boolean;
  readonly input: JsonSchema;
}

/** Memory kept by the author's own service, reached through a connection. */
export interface HttpMemoryProvider {
  readonly kind: "http";
  readonly connection: Connection;
  readonly path: string;
  readonly maxBytes: number;
  readonly tools: readonly HttpMemoryTool[];
}

export type MemoryProvider = DocumentMemoryProvider | HttpMemoryProvider;

export interface MemoryDefinition {
  id: string;
  description: string;
  provider?: MemoryProvider;
}

/** The frozen object `defineMemory` returns. */
export interface Memory {
  readonly id: string;
  readonly description: string;
  readonly provider: MemoryProvider;
}

export interface HttpMemoryToolDefinition {
  name: string;
  description: string;
  access: "read" | "write";
  idempotent?: boolean;
  input: JsonSchema;
}

export interface HttpMemoryOptions {
  connection: Connection;
  /** Default `/memory`. */
  path?: string;
  maxBytes?: number;
  tools?: HttpMemoryToolDefinition[];
}

/** A declaration refused; `details.path` names the field (e.g. `provider.maxBytes`). */
export class MemoryDefinitionError extends OpenComputerError {}

export function defineMemory(definition: MemoryDefinition): Memory {
  const def = plainObject(definition, undefined, "", "{ id, description, provider }");
  onlyKeys(def, ["id", "description", "provider"], undefined, "");
  const id = def.id;
  if (typeof id !== "string" || !MEMORY_RESOURCE_ID_PATTERN.test(id)) {
    fail(
      undefined,
      "id",
      `"id" must be 1-128 lowercase letters and digits with single hyphens between them, e.g. "notes"; got ${typeof id === "string" ? JSON.stringify(id) : describeValue(id)}`,
    );
  }
  const description = def.description;
  if (typeof description !== "string" || description.trim() === "") {
    fail(
      id,
      "description",
      `"description" must be a non-empty string telling the model when to use this memory`,
    );
  }
  if (utf8Bytes(description) > MEMORY_LIMITS.descriptionBytes) {
    fail(id, "description", `"description" is longer than ${MEMORY_LIMITS.descriptionBytes} bytes`);
  }
  const provider = def.provider === undefined ? documentMemory() : def.provider;
  if (!isMemoryProvider(provider)) {
    fail(
      id,
      "provider",
      `"provider" must be documentMemory(...) or httpMemory(...); got ${describeValue(provider)}`,
    );
  }
  const memory = { id, description, provider };
  Object.defineProperty(memory, MEMORY_BRAND, { value: true });
  return Object.freeze(memory);
}

/** Documents in the runtime's store; `maxBytes` bounds each document's text (default 8,192). */
export function documentMemory(options: { maxBytes?: number } = {}): DocumentMemoryProvider {
  const opts = plainObject(options, undefined, "provider", "{ maxBytes }");
  onlyKeys(opts, ["maxBytes"], undefined, "provider");
  const provider = { kind: "document" as const, maxBytes: checkMaxBytes(opts.maxBytes) };
  Object.defineProperty(provider, PROVIDER_BRAND, { value: true });
  return Object.freeze(provider);
}

/** Memory kept by a service of yours, reached through `connection` (docs/memory.md). */
export function httpMemory(options: HttpMemoryOptions): HttpMemoryProvider {
  const opts = plainObject(options, undefined, "provider", "{ connection, path, maxBytes, tools }");
  onlyKeys(opts, ["connection", "path", "maxBytes", "tools"], undefined, "provider");
  if (!isConnection(opts.connection)) {
    fail(
      undefined,
      "provider.connection",
      `httpMemory: "connection" must be a connection returned by defineConnection(); got ${describeValue(opts.connection)}`,
    );
  }
  const connection = opts.connection;
  const path = opts.path === undefined ? "/memory" : opts.path;
  if (
    typeof path !== "string" ||
    !path.startsWith("/") ||
    path.startsWith("//") ||
    /[?#\\\s]/.test(path) ||
    path.split("/").some((s) => s === "." || s === "..")
  ) {
    fail(
      undefined,
      "provider.path",
      `httpMemory: "path" must start with a single "/" and have no query, fragment, "." or ".."; got ${describeValue(path)}`,
    );
  }
  if (!path.startsWith(connection.pathPrefix)) {
    fail(
      undefined,
      "provider.path",
      `httpMemory: "path" ${JSON.stringify(path)} is outside the connection ${JSON.stringify(connection.id)}'s pathPrefix ${JSON.stringify(connection.pathPrefix)}`,
    );
  }
  if (!connection.methods.includes("POST")) {
    fail(
      undefined,
      "provider.connection",
      `httpMemory: the connection ${JSON.stringify(connection.id)} must allow POST; every memory operation is a POST`,
    );
  }
  const provider = {
    kind: "http" as const,
    connection,
    path,
    maxBytes: checkMaxBytes(opts.maxBytes),
    tools: Object.freeze(checkTools(opts.tools)),
  };
  Object.defineProperty(provider, PROVIDER_BRAND, { value: true });
  return Object.freeze(provider);
}

/** True for what `defineMemory` returned, from any copy of this package. */
export function isMemory(value: unknown): value is Memory {
  return typeof value === "object" && value !== null && Object.hasOwn(value, MEMORY_BRAND);
}

function isMemoryProvider(value: unknown): value is MemoryProvider {
  return typeof value === "object" && value !== null && Object.hasOwn(value, PROVIDER_BRAND);
}

/** The plain, JSON-compatible declaration of a memory resource (what the build records). */
export interface MemoryDeclaration {
  id: string;
  description: string;
  provider:
    | { kind: "document"; maxBytes: number }
    | {
        kind: "http";
        connection: ReturnType<typeof connectionDeclaration>;
        path: string;
        maxBytes: number;
        tools: HttpMemoryTool[];
      };
}

export function memoryDeclaration(memory: Memory): MemoryDeclaration {
  const p = memory.provider;
  return {
    id: memory.id,
    description: memory.description,
    provider:
      p.kind === "document"
        ? { kind: "document", maxBytes: p.maxBytes }
        : {
            kind: "http",
            connection: connectionDeclaration(p.connection),
            path: p.path,
            maxBytes: p.maxBytes,
            tools: JSON.parse(JSON.stringify(p.tools)) as HttpMemoryTool[],
          },
  };
}

function checkMaxBytes(value: unknown): number {
  if (value === undefined) return MEMORY_LIMITS.defaultTextBytes;
  if (
    typeof value !== "number" ||
    !Number.isInteger(value) ||
    value < 1 ||
    value > MEMORY_LIMITS.maxTextBytes
  ) {
    fail(
      undefined,
      "provider.maxBytes",
      `"maxBytes" must be an integer from 1 to ${MEMORY_LIMITS.maxTextBytes}; got ${describeValue(value)}`,
    );
  }
  return value;
}

/** memory_save, memory_read and memory_list are document memory's tools. */
const RESERVED_TOOL_NAMES = ["save", "read", "list"];

function checkTools(value: unknown): HttpMemoryTool[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) {
    fail(
      undefined,
      "provider.tools",
      `httpMemory: "tools" must be an array; got ${describeValue(value)}`,
    );
  }
  if (value.length > MEMORY_LIMITS.httpToolsPerResource) {
    fail(
      undefined,
      "provider.tools",
      `httpMemory: at most ${MEMORY_LIMITS.httpToolsPerResource} tools per resource; got ${value.length}`,
    );
  }
  const names = new Set<string>();
  return value.map((raw: unknown, i) => {
    const at = `provider.tools[${i}]`;
    const tool = plainObject(raw, undefined, at, "{ name, description, access, input }");
    onlyKeys(tool, ["name", "description", "access", "idempotent", "input"], undefined, at);
    const { name, description, access, idempotent, input } = tool;
    if (typeof name !== "string" || !MEMORY_HTTP_TOOL_PATTERN.test(name)) {
      fail(
        undefined,
        `${at}.name`,
        `"name" must be 1-32 lowercase letters, digits or "_"; got ${describeValue(name)}`,
      );
    }
    if (names.has(name))
      fail(undefined, `${at}.name`, `two tools are named ${JSON.stringify(name)}`);
    if (RESERVED_TOOL_NAMES.includes(name)) {
      fail(
        undefined,
        `${at}.name`,
        `"${name}" would be the model's memory_${name}, which document memory uses; choose another name`,
      );
    }
    names.add(name);
    if (typeof description !== "string" || description.trim() === "") {
      fail(undefined, `${at}.description`, `"description" must be a non-empty string`);
    }
    if (access !== "read" && access !== "write") {
      fail(
        undefined,
        `${at}.access`,
        `"access" must be "read" or "write"; got ${describeValue(access)}`,
      );
    }
    if (idempotent !== undefined && typeof idempotent !== "boolean") {
      fail(undefined, `${at}.idempotent`, `"idempotent" must be a boolean`);
    }
    return {
      name,
      description,
      access,
      idempotent: idempotent === true,
      input: checkInputSchema(input, `${at}.input`),
    };
  });
}

function checkInputSchema(value: unknown, at: string): JsonSchema {
  const schema = plainObject(value, undefined, at, "an object JSON Schema");
  assertJsonCompatible(schema, "$");
  if (schema.type !== "object") fail(undefined, at, `the input schema must have type "object"`);
  if (JSON.stringify(schema).includes('"$ref"'))
    fail(undefined, at, `the input schema must not use "$ref"`);
  const problem = findSchemaProblem(schema);
  if (problem) fail(undefined, at, `not a valid JSON Schema: ${problem.reason}`);
  return frozenSchemaCopy(schema);
}

function plainObject(
  value: unknown,
  id: string | undefined,
  path: string,
  expected: string,
): Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    fail(id, path, `expected an object such as ${expected}; got ${describeValue(value)}`);
  }
  return value as Record<string, unknown>;
}

function onlyKeys(
  value: Record<string, unknown>,
  allowed: readonly string[],
  id: string | undefined,
  path: string,
): void {
  for (const key of Object.keys(value)) {
    if (allowed.includes(key)) continue;
    const suggestion = suggestKey(key, allowed);
    fail(
      id,
      path ? `${path}.${key}` : key,
      `unknown key ${JSON.stringify(key)}${suggestion ? `; did you mean ${JSON.stringify(suggestion)}?` : ""} Allowed keys: ${allowed.join(", ")}`,
    );
  }
}

function fail(id: string | undefined, path: string, message: string): never {
  const label = id === undefined ? "defineMemory" : `defineMemory(${JSON.stringify(id)})`;
  throw new MemoryDefinitionError("memory_invalid", `${label}: ${message}`, {
    path,
    ...(id === undefined ? {} : { memory: id }),
  });
}
