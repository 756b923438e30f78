// `defineTool` checks a definition eagerly, when the tool module loads, so a mistake fails
// the build or the dev server with the tool and field named, rather than surfacing as a
// confusing model-provider error in the middle of a session.

import { TOOL_BRAND } from "./brand.ts";
import { describeValue } from "./describe-value.ts";
import { suggestKey } from "./did-you-mean.ts";
import { JsonCompatibilityError, ToolDefinitionError } from "./errors.ts";
import { frozenSchemaCopy } from "./freeze.ts";
import { assertJsonCompatible } from "./json-compatible.ts";
import { formatPath } from "./json-path.ts";
import { reservedToolName } from "./reserved-names.ts";
import { findSchemaProblem } from "./schema-check.ts";
import type { JsonSchema, Tool, ToolDefinition, ToolKind } from "./types.ts";

export const TOOL_NAME_PATTERN = /^[a-zA-Z0-9_-]+$/;
/** Model providers cap tool names at 64 characters. */
export const TOOL_NAME_MAX_LENGTH = 64;

const TOOL_DEFINITION_KEYS = [
  "name",
  "description",
  "input",
  "output",
  "result",
  "run",
  "preview",
  "apply",
] as const;

type Field = (typeof TOOL_DEFINITION_KEYS)[number];

class Reporter {
  constructor(readonly tool: string | undefined) {}

  fail(code: string, field: string, message: string, extra: Record<string, unknown> = {}): never {
    const label =
      this.tool === undefined ? "defineTool" : `defineTool(${JSON.stringify(this.tool)})`;
    const details =
      this.tool === undefined
        ? { path: field, ...extra }
        : { path: field, tool: this.tool, ...extra };
    throw new ToolDefinitionError(code, `${label}: ${message}`, details);
  }
}

/** Checks a tool definition and returns the frozen, branded tool `useTool` selects. */
export function defineTool(definition: ToolDefinition): Tool {
  if (!isPlainObject(definition)) {
    throw new ToolDefinitionError(
      "tool_definition_invalid",
      `defineTool: expected an object literal such as { name, description, run }; got ${describeValue(definition)}`,
      { path: "" },
    );
  }
  const def = definition as unknown as Record<Field, unknown>;
  const name = typeof def.name === "string" && isWellFormedName(def.name) ? def.name : undefined;
  const report = new Reporter(name);

  checkKeys(def, report);
  checkName(def.name, report);
  checkDescription(def.description, report);
  const kind = checkImplementation(def, report);

  if (def.result !== undefined && typeof def.result !== "boolean") {
    report.fail(
      "tool_result_invalid",
      "result",
      `"result" must be true or false; got ${describeWithValue(def.result)}`,
    );
  }
  if (def.result === true) {
    if (def.output === undefined) {
      report.fail(
        "tool_result_requires_output",
        "output",
        `"result: true" requires "output": the result tool's output schema is what every reported value is validated against`,
      );
    }
    if (kind !== "run") {
      report.fail(
        "tool_result_requires_run",
        "run",
        `"result: true" requires "run": a result tool reports its value itself and cannot wait for approval with "preview"/"apply"`,
      );
    }
  }

  const input = def.input === undefined ? undefined : checkSchema("input", def.input, report);
  if (input !== undefined) checkInputIsObject(input, report);
  const output = def.output === undefined ? undefined : checkSchema("output", def.output, report);

  const tool: Record<string, unknown> = {
    name: def.name,
    description: def.description,
    kind,
  };
  if (input !== undefined) tool.input = frozenSchemaCopy(input);
  if (output !== undefined) tool.output = frozenSchemaCopy(output);
  tool.result = def.result === true;
  if (kind === "run") tool.run = def.run;
  else {
    tool.preview = def.preview;
    tool.apply = def.apply;
  }
  Object.defineProperty(tool, TOOL_BRAND, { value: true, enumerable: false });
  return Object.freeze(tool) as unknown as Tool;
}

function checkKeys(def: Record<string, unknown>, report: Reporter): void {
  const allowed: readonly string[] = TOOL_DEFINITION_KEYS;
  const unknown = Object.keys(def).filter((key) => !allowed.includes(key));
  const first = unknown[0];
  if (first === undefined) return;
  const suggestion = suggestKey(first, TOOL_DEFINITION_KEYS);
  const listed = unknown.map((key) => JSON.stringify(key)).join(", ");
  report.fail(
    "tool_unknown_key",
    first,
    `unknown key${unknown.length > 1 ? "s" : ""} ${listed}` +
      (suggestion ? `; did you mean ${JSON.stringify(suggestion)}?` : "") +
      ` Allowed keys: ${TOOL_DEFINITION_KEYS.join(", ")}`,
    { unknownKeys: unknown, ...(suggestion ? { suggestion } : {}) },
  );
}

function checkName(name: unknown, report: Reporter): void {
  const rule = `letters, digits, underscores and hyphens, 1 to ${TOOL_NAME_MAX_LENGTH} characters`;
  if (name === undefined) {
    report.fail("tool_name_invalid", "name", `"name" is required (${rule})`);
  }
  if (typeof name !== "string") {
    report.fail(
      "tool_name_invalid",
      "name",
      `"name" must be a string (${rule}); got ${describeValue(name)}`,
    );
  }
  if (name.length === 0) {
    report.fail("tool_name_invalid", "name", `"name" must not be empty (${rule})`);
  }
  if (name.length > TOOL_NAME_MAX_LENGTH) {
    report.fail(
      "tool_name_invalid",
      "name",
      `"name" must be at most ${TOOL_NAME_MAX_LENGTH} characters, the model providers' limit; got ${name.length} characters: ${JSON.stringify(name)}`,
    );
  }
  if (!TOOL_NAME_PATTERN.test(name)) {
    report.fail(
      "tool_name_invalid",
      "name",
      `"name" must contain only letters, digits, underscores and hyphens (${TOOL_NAME_PATTERN}); got ${JSON.stringify(name)}`,
    );
  }
  const reserved = reservedToolName(name);
  if (reserved) report.fail("tool_name_reserved", "name", reserved);
}

function checkDescription(description: unknown, report: Reporter): void {
  if (typeof description !== "string" || description.trim() === "") {
    report.fail(
      "tool_description_invalid",
      "description",
      `"description" must be a non-empty string telling the model what the tool does and when to use it; got ${describeWithValue(description)}`,
    );
  }
}

function checkImplementation(def: Record<Field, unknown>, report: Reporter): ToolKind {
  const hasRun = def.run !== undefined;
  const hasPreview = def.preview !== undefined;
  const hasApply = def.apply !== undefined;
  const code = "tool_implementation_invalid";
  if (hasRun && (hasPreview || hasApply)) {
    const other = hasPreview ? "preview" : "apply";
    report.fail(
      code,
      other,
      `has both "run" and "${other}": give either "run", or "preview" and "apply" to wait for a person's approval, never both`,
    );
  }
  if (hasRun) {
    requireFunction(def, "run", report);
    return "run";
  }
  if (hasPreview && hasApply) {
    requireFunction(def, "preview", report);
    requireFunction(def, "apply", report);
    return "approval";
  }
  if (hasPreview) {
    report.fail(
      code,
      "apply",
      `has "preview" but no "apply": an approval tool needs both, and "apply" performs the write once a person approves`,
    );
  }
  if (hasApply) {
    report.fail(
      code,
      "preview",
      `has "apply" but no "preview": an approval tool needs both, and "preview" builds the card the person approves`,
    );
  }
  return report.fail(
    code,
    "run",
    `needs an implementation: give "run", or "preview" and "apply" to wait for a person's approval`,
  );
}

function requireFunction(def: Record<Field, unknown>, field: Field, report: Reporter): void {
  if (typeof def[field] !== "function") {
    report.fail(
      "tool_implementation_invalid",
      field,
      `"${field}" must be a function; got ${describeValue(def[field])}`,
    );
  }
}

function checkSchema(field: "input" | "output", schema: unknown, report: Reporter): JsonSchema {
  if (!isPlainObject(schema)) {
    report.fail(
      "tool_schema_invalid",
      field,
      `"${field}" must be a JSON Schema object; got ${describeValue(schema)}`,
    );
  }
  try {
    assertJsonCompatible(schema, field);
  } catch (error) {
    if (!(error instanceof JsonCompatibilityError)) throw error;
    report.fail("tool_schema_invalid", field, `"${field}" must be plain JSON: ${error.message}`, {
      schemaPath: error.details.path,
    });
  }
  const problem = findSchemaProblem(schema as JsonSchema);
  if (problem) {
    const where = formatPath(field, problem.at);
    report.fail(
      "tool_schema_invalid",
      field,
      `"${field}" is not a valid JSON Schema: at ${where}: ${problem.reason}`,
      { schemaPath: where, reason: problem.reason },
    );
  }
  return schema as JsonSchema;
}

function checkInputIsObject(input: JsonSchema, report: Reporter): void {
  if (input.type === "object") return;
  const got = input.type === undefined ? `no "type"` : `type ${JSON.stringify(input.type)}`;
  report.fail(
    "tool_input_not_object",
    "input",
    `"input" must describe an object, with type: "object" at the top level (model providers pass tool arguments as a JSON object); got ${got}`,
  );
}

function isWellFormedName(name: string): boolean {
  return name.length <= TOOL_NAME_MAX_LENGTH && TOOL_NAME_PATTERN.test(name);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === null || proto === Object.prototype;
}

function describeWithValue(value: unknown): string {
  return typeof value === "string" ? `the string ${JSON.stringify(value)}` : describeValue(value);
}
