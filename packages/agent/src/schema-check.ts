// Checks that a tool's `input`/`output` is a JSON Schema a model provider and the runtime's
// validator will accept, so a broken schema fails when the tool module loads instead of on
// the first model call.
//
// Decisions:
// - Draft 2020-12 unless `$schema` names draft-07; other drafts are refused by name rather
//   than validated against the wrong meta-schema.
// - Unknown keywords are allowed (strict: false): JSON Schema permits them and provider
//   schemas often carry extensions such as `x-order`. `format` is not checked here.
// - Every schema is also compiled, in a fresh instance, to catch what the meta-schema
//   cannot: unresolvable `$ref`s (there is no network at deploy time) and invalid regexes.
//   A fresh instance keeps schemas from sharing `$id`s or piling up in a cache.

import AjvDraft07 from "ajv";
import Ajv2020 from "ajv/dist/2020.js";
import type { PathSegment } from "./json-path.ts";
import type { JsonSchema } from "./types.ts";

export interface SchemaProblem {
  /** Why the schema is refused, e.g. `must be equal to one of the allowed values (...)`. */
  reason: string;
  /** Where inside the schema, as path segments (empty for the schema itself). */
  at: PathSegment[];
}

type Draft = "2020-12" | "draft-07";

const DRAFT_BY_URI: Record<string, Draft> = {
  "https://json-schema.org/draft/2020-12/schema": "2020-12",
  "http://json-schema.org/draft-07/schema": "draft-07",
};

const OPTIONS = {
  strict: false,
  logger: false,
  validateFormats: false,
  addUsedSchema: false,
} as const;

const metaValidators: Partial<Record<Draft, AjvDraft07 | Ajv2020>> = {};

// Built on first use: the first meta-schema validation compiles the meta-schema itself.
function metaValidator(draft: Draft): AjvDraft07 | Ajv2020 {
  let ajv = metaValidators[draft];
  if (!ajv) {
    ajv = draft === "draft-07" ? new AjvDraft07(OPTIONS) : new Ajv2020(OPTIONS);
    metaValidators[draft] = ajv;
  }
  return ajv;
}

/** Returns why `schema` is not a usable JSON Schema, or undefined when it is. */
export function findSchemaProblem(schema: JsonSchema): SchemaProblem | undefined {
  const declared = schema.$schema;
  let draft: Draft = "2020-12";
  if (declared !== undefined) {
    const found =
      typeof declared === "string" ? DRAFT_BY_URI[declared.replace(/#$/, "")] : undefined;
    if (!found) {
      return {
        reason:
          `unsupported $schema ${JSON.stringify(declared)}; use ` +
          `"https://json-schema.org/draft/2020-12/schema" (the default) or ` +
          `"http://json-schema.org/draft-07/schema#"`,
        at: ["$schema"],
      };
    }
    draft = found;
  }

  const ajv = metaValidator(draft);
  if (!ajv.validateSchema(schema)) {
    const first = ajv.errors?.[0];
    if (first) {
      const allowed = (first.params as { allowedValues?: unknown[] }).allowedValues;
      const reason = allowed
        ? `${first.message} (${allowed.map((v) => JSON.stringify(v)).join(", ")})`
        : String(first.message);
      return { reason, at: pointerToSegments(schema, first.instancePath) };
    }
    return { reason: "not a valid JSON Schema", at: [] };
  }

  try {
    const compiler =
      draft === "draft-07"
        ? new AjvDraft07({ ...OPTIONS, meta: false, validateSchema: false })
        : new Ajv2020({ ...OPTIONS, meta: false, validateSchema: false });
    compiler.compile(schema);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return { reason: message, at: locateCompileFailure(schema, message) };
  }
  return undefined;
}

function pointerToSegments(schema: unknown, pointer: string): PathSegment[] {
  if (pointer === "") return [];
  const segments: PathSegment[] = [];
  let node: unknown = schema;
  for (const raw of pointer.slice(1).split("/")) {
    const token = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    const segment: PathSegment = Array.isArray(node) ? Number(token) : token;
    segments.push(segment);
    node =
      node !== null && typeof node === "object"
        ? (node as Record<string, unknown>)[token]
        : undefined;
  }
  return segments;
}

// Compile errors carry no location, so find the keyword that most likely caused them.
function locateCompileFailure(schema: JsonSchema, message: string): PathSegment[] {
  const ref = /can't resolve reference (\S+) from id/.exec(message)?.[1];
  if (ref !== undefined) {
    return findPath(schema, (key, value) => key === "$ref" && value === ref) ?? [];
  }
  if (/regular expression/i.test(message)) {
    const bad = findPath(schema, (key, value, parentKey) => {
      if (key === "pattern" && typeof value === "string") return !isValidRegex(value);
      return parentKey === "patternProperties" && !isValidRegex(key);
    });
    return bad ?? [];
  }
  return [];
}

function isValidRegex(source: string): boolean {
  try {
    new RegExp(source, "u");
    return true;
  } catch {
    return false;
  }
}

type KeyTest = (key: string, value: unknown, parentKey: PathSegment | undefined) => boolean;

function findPath(
  node: unknown,
  test: KeyTest,
  path: PathSegment[] = [],
): PathSegment[] | undefined {
  if (node === null || typeof node !== "object") return undefined;
  const parentKey = path[path.length - 1];
  if (Array.isArray(node)) {
    for (let i = 0; i < node.length; i++) {
      const found = findPath(node[i], test, [...path, i]);
      if (found) return found;
    }
    return undefined;
  }
  for (const [key, value] of Object.entries(node)) {
    if (test(key, value, parentKey)) return [...path, key];
    const found = findPath(value, test, [...path, key]);
    if (found) return found;
  }
  return undefined;
}
