// OpenAI's strict mode (Structured Outputs for function calling) compiles a tool's input schema
// into a grammar, so it only takes a subset of JSON Schema and refuses the whole request when a
// schema falls outside it. These rules decide, in one place, both what the OpenAI adapter sends
// (`strict: true` only for a schema that qualifies) and what `opencomputer build` warns about.
// Source: OpenAI's Structured Outputs guide, "Supported schemas" (types, per-type keywords,
// additionalProperties: false, every property required, nesting and size limits).

/** One reason a schema cannot be sent in strict mode; `path` is a JSON path into the schema. */
export interface StrictSchemaIssue {
  path: string;
  reason: string;
}

/** Keywords strict mode accepts on any schema, whatever its type. */
const COMMON = new Set([
  "type",
  "description",
  "title",
  "$comment",
  "enum",
  "const",
  "anyOf",
  "$ref",
  "$defs",
  "definitions",
]);

/** Keywords strict mode accepts only for the given type. */
const BY_TYPE: Record<string, ReadonlySet<string>> = {
  object: new Set(["properties", "required", "additionalProperties"]),
  array: new Set(["items", "minItems", "maxItems"]),
  string: new Set(["pattern", "format"]),
  number: new Set(["multipleOf", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum"]),
  integer: new Set(["multipleOf", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum"]),
  boolean: new Set(),
  null: new Set(),
};

/** The string formats strict mode knows; any other `format` is refused. */
export const STRICT_STRING_FORMATS: readonly string[] = [
  "date-time",
  "time",
  "date",
  "duration",
  "email",
  "hostname",
  "ipv4",
  "ipv6",
  "uuid",
];

/** OpenAI's documented limits for one strict schema. */
export const STRICT_LIMITS = { maxDepth: 10, maxProperties: 5000, maxEnumValues: 1000 };

/**
 * Every reason `schema` cannot be a strict tool schema, in document order; an empty list means
 * it qualifies as written (nothing is rewritten: what the author wrote is what the model gets).
 */
export function strictSchemaIssues(schema: unknown): StrictSchemaIssue[] {
  const issues: StrictSchemaIssue[] = [];
  const counts = { properties: 0, enumValues: 0 };
  if (!isObject(schema) || schema.type !== "object") {
    issues.push({
      path: "$",
      reason: 'the root must be an object schema (type: "object"), not anyOf or another type',
    });
    if (!isObject(schema)) return issues;
  }
  walk(schema, "$", 1, issues, counts);
  if (counts.properties > STRICT_LIMITS.maxProperties) {
    issues.push({
      path: "$",
      reason: `${counts.properties} properties in all; strict mode allows at most ${STRICT_LIMITS.maxProperties}`,
    });
  }
  if (counts.enumValues > STRICT_LIMITS.maxEnumValues) {
    issues.push({
      path: "$",
      reason: `${counts.enumValues} enum values in all; strict mode allows at most ${STRICT_LIMITS.maxEnumValues}`,
    });
  }
  return issues;
}

/** True when the schema can be sent with `strict: true`. */
export function isStrictSchema(schema: unknown): boolean {
  return strictSchemaIssues(schema).length === 0;
}

function walk(
  node: Record<string, unknown>,
  path: string,
  depth: number,
  issues: StrictSchemaIssue[],
  counts: { properties: number; enumValues: number },
): void {
  if (depth > STRICT_LIMITS.maxDepth) {
    issues.push({
      path,
      reason: `nested ${depth} levels deep; strict mode allows at most ${STRICT_LIMITS.maxDepth}`,
    });
    return;
  }
  const types = typesOf(node.type);
  const describesValue =
    types.length > 0 || "anyOf" in node || "$ref" in node || "enum" in node || "const" in node;
  if (!describesValue && path !== "$") {
    issues.push({
      path,
      reason: "a schema without type (any value) is not allowed; give it a type or anyOf",
    });
  }
  const allowed = new Set(COMMON);
  if (path === "$") allowed.add("$schema").add("$id");
  for (const type of types) for (const keyword of BY_TYPE[type] ?? []) allowed.add(keyword);
  // An untyped schema with `properties` is still read as an object by the API.
  if (types.length === 0 && "properties" in node) for (const k of BY_TYPE.object!) allowed.add(k);
  for (const type of types) {
    if (!(type in BY_TYPE)) issues.push({ path, reason: `type "${type}" is not supported` });
  }
  for (const keyword of Object.keys(node)) {
    if (!allowed.has(keyword)) issues.push({ path, reason: unsupported(keyword, types) });
  }
  if (typeof node.format === "string" && !STRICT_STRING_FORMATS.includes(node.format)) {
    issues.push({
      path,
      reason: `format "${node.format}" is not supported; strict mode knows ${STRICT_STRING_FORMATS.join(", ")}`,
    });
  }
  if (Array.isArray(node.enum)) counts.enumValues += node.enum.length;

  const isObjectNode = types.includes("object") || (types.length === 0 && "properties" in node);
  if (isObjectNode) checkObject(node, path, depth, issues, counts);
  if (types.includes("array") && "items" in node) {
    if (isObject(node.items)) walk(node.items, `${path}.items`, depth + 1, issues, counts);
    else issues.push({ path: `${path}.items`, reason: "items must be one schema, not a tuple" });
  }
  if (Array.isArray(node.anyOf)) {
    node.anyOf.forEach((branch, i) => {
      const at = `${path}.anyOf[${i}]`;
      if (isObject(branch)) walk(branch, at, depth + 1, issues, counts);
      else issues.push({ path: at, reason: "each anyOf branch must be a schema object" });
    });
  }
  for (const key of ["$defs", "definitions"] as const) {
    const defs = node[key];
    if (!isObject(defs)) continue;
    for (const [name, def] of Object.entries(defs)) {
      if (isObject(def)) walk(def, `${path}.${key}${member(name)}`, depth, issues, counts);
    }
  }
}

function checkObject(
  node: Record<string, unknown>,
  path: string,
  depth: number,
  issues: StrictSchemaIssue[],
  counts: { properties: number; enumValues: number },
): void {
  if (node.additionalProperties !== false) {
    issues.push({
      path,
      reason:
        node.additionalProperties === undefined
          ? "additionalProperties: false is missing; strict mode needs it on every object"
          : "additionalProperties must be false in strict mode",
    });
  }
  const properties = isObject(node.properties) ? node.properties : {};
  const required = new Set(Array.isArray(node.required) ? node.required : []);
  const optional = Object.keys(properties).filter((name) => !required.has(name));
  if (optional.length > 0) {
    issues.push({
      path,
      reason: `every property must be listed in required (optional ones as a union with null); not required: ${optional.join(", ")}`,
    });
  }
  for (const [name, child] of Object.entries(properties)) {
    counts.properties++;
    const at = `${path}.properties${member(name)}`;
    if (isObject(child)) walk(child, at, depth + 1, issues, counts);
    else issues.push({ path: at, reason: "a property's schema must be an object" });
  }
}

function unsupported(keyword: string, types: string[]): string {
  for (const [type, keywords] of Object.entries(BY_TYPE)) {
    if (keywords.has(keyword) && !types.includes(type)) {
      return `${keyword} applies to ${type} schemas only`;
    }
  }
  return `${keyword} is not supported in strict mode`;
}

function typesOf(type: unknown): string[] {
  if (typeof type === "string") return [type];
  return Array.isArray(type) ? type.filter((t): t is string => typeof t === "string") : [];
}

function member(name: string): string {
  return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(name) ? `.${name}` : `[${JSON.stringify(name)}]`;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
