// Finds the defineTool() calls of a module and reads what the build must know without running
// code: the tool's name, whether it is the result tool, where its output schema is written, and
// whether it runs with `run` or waits with `preview`/`apply`. These must be ordinary properties
// of the object literal, so a reader (and the build) can see them.

import { TOOL_NAME_MAX_LENGTH, TOOL_NAME_PATTERN } from "@opencomputer/agent";
import { reservedToolName } from "@opencomputer/agent/internal";
import ts from "typescript";
import type { BuildError } from "./errors.ts";
import { formOf, propertyKey, unwrap } from "./literal.ts";
import { errorAt, type ParsedModule, snippet } from "./parse.ts";

export interface StaticTool {
  mod: ParsedModule;
  call: ts.CallExpression;
  /** The name the module exports it under (`default` for `export default defineTool(...)`). */
  exportName?: string;
  /** The literal name, when it is one. */
  name?: string;
  /** `result: true` written literally. */
  result: boolean;
  /** The `result` property, where result-tool errors point. */
  resultNode?: ts.Node;
  /** The `output` value as written (an identifier for the shorthand `{ output }`). */
  output?: ts.Expression;
  /** False when the definition could not be read in full (a spread, a computed key, …). */
  readable: boolean;
}

const DECLARED = new Set(["name", "result", "output"]);
const IMPLEMENTATION = new Set(["run", "preview", "apply"]);

/** The module's tools, each with the problems of its own definition. */
export function findTools(mod: ParsedModule): { tools: StaticTool[]; errors: BuildError[] } {
  const tools: StaticTool[] = [];
  const errors: BuildError[] = [];
  for (const call of mod.toolCalls) tools.push(readTool(mod, call, errors));
  return { tools, errors };
}

function readTool(mod: ParsedModule, call: ts.CallExpression, errors: BuildError[]): StaticTool {
  const tool: StaticTool = { mod, call, result: false, readable: true };
  const exportName = placement(mod, call);
  if (exportName === undefined) {
    errors.push(
      errorAt(
        mod,
        call,
        "tool_not_exported",
        "defineTool() must initialise an exported top-level const (export const myTool = defineTool({...})) or be the default export, so the build can find and record the tool",
      ),
    );
  } else {
    tool.exportName = exportName;
  }

  const arg = call.arguments[0] && unwrap(call.arguments[0]);
  if (!arg || !ts.isObjectLiteralExpression(arg)) {
    errors.push(
      errorAt(
        mod,
        arg ?? call,
        "tool_not_literal",
        `defineTool() must be given an object literal, so name, result and output can be read without running code; got ${arg ? formOf(mod, arg) : "no argument"}`,
      ),
    );
    tool.readable = false;
    return tool;
  }

  const seen = new Map<string, ts.ObjectLiteralElementLike>();
  for (const property of arg.properties) {
    if (ts.isSpreadAssignment(property)) {
      errors.push(
        errorAt(
          mod,
          property,
          "spread_in_tool",
          `defineTool() object has a spread \`${snippet(mod, property)}\`: it could hide name, result or output; write each property out`,
        ),
      );
      tool.readable = false;
      continue;
    }
    const name = property.name;
    if (name && ts.isComputedPropertyName(name)) {
      errors.push(
        errorAt(
          mod,
          name,
          "computed_property",
          `defineTool() object has a computed property name \`${snippet(mod, name)}\`: write the key as a plain name`,
        ),
      );
      tool.readable = false;
      continue;
    }
    const key = name ? propertyKey(name) : undefined;
    if (key === undefined) continue;
    if (DECLARED.has(key) || IMPLEMENTATION.has(key)) {
      if (seen.has(key) && DECLARED.has(key)) {
        errors.push(
          errorAt(mod, property, "duplicate_property", `defineTool() object gives "${key}" twice`),
        );
      }
      seen.set(key, property);
    }
  }

  readName(mod, tool, seen.get("name"), call, errors);
  readResult(mod, tool, seen.get("result"), errors);
  const output = seen.get("output");
  if (output) {
    const value = ordinaryValue(mod, output, "output", errors);
    if (value) tool.output = value;
  }
  if (tool.result && tool.readable) checkResultTool(mod, tool, seen, errors);
  return tool;
}

/** The export name when the call is `export const x = defineTool(...)` or `export default`. */
function placement(mod: ParsedModule, call: ts.CallExpression): string | undefined {
  let node: ts.Node = call;
  while (
    ts.isParenthesizedExpression(node.parent) ||
    ts.isAsExpression(node.parent) ||
    ts.isSatisfiesExpression(node.parent)
  ) {
    node = node.parent;
  }
  const parent = node.parent;
  if (ts.isExportAssignment(parent) && parent.parent === mod.source) return "default";
  if (
    !ts.isVariableDeclaration(parent) ||
    parent.initializer !== node ||
    !ts.isIdentifier(parent.name) ||
    !(parent.parent.flags & ts.NodeFlags.Const) ||
    parent.parent.parent.parent !== mod.source
  ) {
    return undefined;
  }
  const local = parent.name.text;
  for (const [exported, binding] of mod.exports) {
    if (binding.kind === "local" && binding.local === local) return exported;
  }
  return undefined;
}

/** The value of `name`/`result`/`output` when written as an ordinary property. */
function ordinaryValue(
  mod: ParsedModule,
  property: ts.ObjectLiteralElementLike,
  key: string,
  errors: BuildError[],
): ts.Expression | undefined {
  if (ts.isPropertyAssignment(property)) return property.initializer;
  if (ts.isShorthandPropertyAssignment(property)) return property.name;
  const form = ts.isMethodDeclaration(property)
    ? "a method"
    : ts.isGetAccessorDeclaration(property)
      ? "a getter"
      : "a setter";
  errors.push(
    errorAt(
      mod,
      property,
      "property_not_ordinary",
      `"${key}" is written as ${form}; write it as an ordinary property (${key}: value) of the defineTool() object`,
    ),
  );
  return undefined;
}

function readName(
  mod: ParsedModule,
  tool: StaticTool,
  property: ts.ObjectLiteralElementLike | undefined,
  call: ts.CallExpression,
  errors: BuildError[],
): void {
  if (!property) {
    // A spread may have supplied it; that is already reported.
    if (tool.readable) {
      errors.push(errorAt(mod, call, "name_missing", `defineTool() object has no "name"`));
    }
    return;
  }
  const value = ordinaryValue(mod, property, "name", errors);
  if (!value) return;
  const e = unwrap(value);
  if (!ts.isStringLiteral(e) && !ts.isNoSubstitutionTemplateLiteral(e)) {
    const form = ts.isShorthandPropertyAssignment(property)
      ? `the shorthand \`name\`, an identifier where a literal is needed`
      : formOf(mod, e);
    errors.push(
      errorAt(
        mod,
        e,
        "name_not_literal",
        `"name" is ${form}; write the tool name as a string literal`,
      ),
    );
    return;
  }
  const name = e.text;
  if (name.length === 0 || name.length > TOOL_NAME_MAX_LENGTH || !TOOL_NAME_PATTERN.test(name)) {
    errors.push(
      errorAt(
        mod,
        e,
        "tool_name_invalid",
        `"name" ${JSON.stringify(name)} must be 1 to ${TOOL_NAME_MAX_LENGTH} letters, digits, underscores and hyphens`,
      ),
    );
    return;
  }
  const reserved = reservedToolName(name);
  if (reserved) {
    errors.push(errorAt(mod, e, "tool_name_reserved", reserved));
    return;
  }
  tool.name = name;
}

function readResult(
  mod: ParsedModule,
  tool: StaticTool,
  property: ts.ObjectLiteralElementLike | undefined,
  errors: BuildError[],
): void {
  if (!property) return;
  tool.resultNode = property;
  const value = ordinaryValue(mod, property, "result", errors);
  if (!value) {
    tool.readable = false;
    return;
  }
  const e = unwrap(value);
  if (e.kind === ts.SyntaxKind.TrueKeyword) tool.result = true;
  else if (e.kind !== ts.SyntaxKind.FalseKeyword) {
    const form = ts.isShorthandPropertyAssignment(property)
      ? `the shorthand \`result\`, an identifier where a literal is needed`
      : formOf(mod, e);
    errors.push(
      errorAt(
        mod,
        e,
        "result_not_literal",
        `"result" is ${form}; write result: true or result: false`,
      ),
    );
    tool.readable = false;
  }
}

function checkResultTool(
  mod: ParsedModule,
  tool: StaticTool,
  seen: Map<string, ts.ObjectLiteralElementLike>,
  errors: BuildError[],
): void {
  const at = tool.resultNode ?? tool.call;
  const label = tool.name ? `Result tool "${tool.name}"` : "A result tool";
  if (!seen.has("output")) {
    errors.push(
      errorAt(
        mod,
        at,
        "result_tool_requires_output",
        `${label} must declare "output": the deployment records that schema and validates every reported value against it`,
      ),
    );
  }
  const waits = seen.get("preview") ?? seen.get("apply");
  if (waits) {
    errors.push(
      errorAt(
        mod,
        waits,
        "result_tool_requires_run",
        `${label} must use run(), not preview/apply: a result tool reports its value itself and cannot wait for a person's approval`,
      ),
    );
  } else if (!seen.has("run")) {
    errors.push(
      errorAt(
        mod,
        at,
        "result_tool_requires_run",
        `${label} must have run(), which returns the reported value`,
      ),
    );
  }
}
