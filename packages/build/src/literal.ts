// Reads a JSON value out of source text. Nothing is evaluated: an expression is accepted only
// when its value is written out in full (object and array literals of strings, numbers,
// booleans and null), and everything else is refused with the form it has, so the schema a
// deployment records is exactly the one a person reads in the file.

import type { JsonValue } from "@opencomputer/agent";
import ts from "typescript";
import type { BuildError } from "./errors.ts";
import { errorAt, type ParsedModule, snippet } from "./parse.ts";

export type { JsonValue };

/** Strips what only the type system sees: parentheses, `as const`, `as T`, `satisfies T`, `x!`. */
export function unwrap(expression: ts.Expression): ts.Expression {
  let e = expression;
  for (;;) {
    if (
      ts.isParenthesizedExpression(e) ||
      ts.isAsExpression(e) ||
      ts.isSatisfiesExpression(e) ||
      ts.isNonNullExpression(e) ||
      ts.isTypeAssertionExpression(e)
    ) {
      e = e.expression;
    } else {
      return e;
    }
  }
}

/** What an expression that is not a literal is, for messages: "a function call `make()`". */
export function formOf(
  mod: ParsedModule,
  expression: ts.Expression,
  isNamespace = noNamespaces,
): string {
  const e = unwrap(expression);
  const text = `\`${snippet(mod, e)}\``;
  if (ts.isCallExpression(e)) return `a function call ${text}`;
  if (ts.isNewExpression(e)) return `a \`new\` expression ${text}`;
  if (ts.isTaggedTemplateExpression(e)) return `a tagged template (a function call) ${text}`;
  if (ts.isPropertyAccessExpression(e) || ts.isElementAccessExpression(e)) {
    const root = e.expression;
    return ts.isIdentifier(root) && isNamespace(root.text)
      ? `a namespace member ${text}`
      : `a member access ${text}`;
  }
  if (ts.isIdentifier(e)) return `an identifier ${text} where a literal is needed`;
  if (ts.isTemplateExpression(e)) {
    return `a template literal with substitutions ${text} where a literal is needed`;
  }
  if (ts.isArrowFunction(e) || ts.isFunctionExpression(e)) return `a function ${text}`;
  if (ts.isClassExpression(e)) return `a class ${text}`;
  if (ts.isConditionalExpression(e)) return `a conditional expression ${text}`;
  if (ts.isBinaryExpression(e) || ts.isPrefixUnaryExpression(e)) {
    return `a computed expression ${text}`;
  }
  if (ts.isAwaitExpression(e)) return `an await expression ${text}`;
  if (ts.isRegularExpressionLiteral(e)) return `a regular expression ${text} (not JSON)`;
  if (ts.isBigIntLiteral(e)) return `a bigint ${text} (not JSON)`;
  if (ts.isStringLiteral(e)) return `the string ${text}`;
  if (ts.isNumericLiteral(e)) return `the number ${text}`;
  if (ts.isArrayLiteralExpression(e)) return `an array literal ${text}`;
  return `an expression ${text} that is not a JSON literal`;
}

const noNamespaces = (_name: string): boolean => false;

/** The error for a schema part that is not a literal, with the code of the form it has. */
export function refuseForm(
  mod: ParsedModule,
  expression: ts.Expression,
  where: string,
  isNamespace = noNamespaces,
): BuildError {
  const e = unwrap(expression);
  const code =
    ts.isCallExpression(e) || ts.isNewExpression(e) || ts.isTaggedTemplateExpression(e)
      ? "output_function_call"
      : ts.isPropertyAccessExpression(e) || ts.isElementAccessExpression(e)
        ? "output_namespace_member"
        : "output_not_static";
  return errorAt(mod, e, code, `${where} is ${formOf(mod, e, isNamespace)}; ${OUTPUT_FIX}`);
}

export const OUTPUT_FIX =
  "write the schema as an object literal in defineTool(), as a const object literal in the same module, or import such a const by name from a module in the agent directory";

/**
 * The JSON value of a literal expression. Every refused part is reported (not only the first),
 * and `value` is present only when there were none.
 */
export function readJsonLiteral(
  mod: ParsedModule,
  expression: ts.Expression,
  where: string,
  isNamespace?: (name: string) => boolean,
): { value?: JsonValue; errors: BuildError[] } {
  const errors: BuildError[] = [];
  const value = read(mod, expression, where, errors, isNamespace);
  return errors.length === 0 ? { value, errors } : { errors };
}

function read(
  mod: ParsedModule,
  expression: ts.Expression,
  where: string,
  errors: BuildError[],
  isNamespace?: (name: string) => boolean,
): JsonValue {
  const e = unwrap(expression);
  switch (e.kind) {
    case ts.SyntaxKind.TrueKeyword:
      return true;
    case ts.SyntaxKind.FalseKeyword:
      return false;
    case ts.SyntaxKind.NullKeyword:
      return null;
  }
  if (ts.isStringLiteral(e) || ts.isNoSubstitutionTemplateLiteral(e)) return e.text;
  if (ts.isNumericLiteral(e)) return Number(e.text);
  if (
    ts.isPrefixUnaryExpression(e) &&
    (e.operator === ts.SyntaxKind.MinusToken || e.operator === ts.SyntaxKind.PlusToken) &&
    ts.isNumericLiteral(unwrap(e.operand))
  ) {
    const n = Number((unwrap(e.operand) as ts.NumericLiteral).text);
    return e.operator === ts.SyntaxKind.MinusToken ? -n : n;
  }
  if (ts.isArrayLiteralExpression(e)) {
    const items: JsonValue[] = [];
    e.elements.forEach((element, i) => {
      if (ts.isSpreadElement(element)) {
        errors.push(
          errorAt(
            mod,
            element,
            "output_spread",
            `${where}[${i}] is a spread \`${snippet(mod, element)}\`; write the items out`,
          ),
        );
      } else if (ts.isOmittedExpression(element)) {
        errors.push(
          errorAt(
            mod,
            e,
            "output_not_static",
            `${where} has an empty array slot at [${i}] (not JSON)`,
          ),
        );
      } else {
        items.push(read(mod, element, `${where}[${i}]`, errors, isNamespace));
      }
    });
    return items;
  }
  if (ts.isObjectLiteralExpression(e)) return readObject(mod, e, where, errors, isNamespace);
  errors.push(refuseForm(mod, e, where, isNamespace));
  return null;
}

function readObject(
  mod: ParsedModule,
  object: ts.ObjectLiteralExpression,
  where: string,
  errors: BuildError[],
  isNamespace?: (name: string) => boolean,
): JsonValue {
  // A null prototype, so a key such as "constructor" is an ordinary key like any other.
  const result: { [key: string]: JsonValue } = Object.create(null);
  for (const property of object.properties) {
    if (ts.isSpreadAssignment(property)) {
      errors.push(
        errorAt(
          mod,
          property,
          "output_spread",
          `${where} has a spread \`${snippet(mod, property)}\`; write the properties out`,
        ),
      );
      continue;
    }
    const name = property.name;
    if (name && ts.isComputedPropertyName(name)) {
      errors.push(
        errorAt(
          mod,
          name,
          "computed_property",
          `${where} has a computed property name \`${snippet(mod, name)}\`; write the key as a plain name or string`,
        ),
      );
      continue;
    }
    const key = name ? propertyKey(name) : undefined;
    const path = key === undefined ? where : `${where}.${key}`;
    if (ts.isShorthandPropertyAssignment(property)) {
      errors.push(
        errorAt(
          mod,
          property,
          "output_not_static",
          `${path} is the shorthand \`${key}\`, an identifier where a literal is needed; ${OUTPUT_FIX}`,
        ),
      );
      continue;
    }
    if (!ts.isPropertyAssignment(property) || key === undefined) {
      errors.push(
        errorAt(
          mod,
          property,
          "output_not_static",
          `${path} is a method or accessor, not a JSON value`,
        ),
      );
      continue;
    }
    // In an object literal `__proto__: x` sets the prototype instead of defining a key, so the
    // value the module builds would not have the key this text shows.
    if (key === "__proto__") {
      errors.push(
        errorAt(
          mod,
          name,
          "output_not_static",
          `${where} has a __proto__ key, which sets the object's prototype instead of defining a property`,
        ),
      );
      continue;
    }
    result[key] = read(mod, property.initializer, path, errors, isNamespace);
  }
  // Back to an ordinary object so the value serialises and compares like any parsed JSON.
  return { ...result };
}

/** The key of a non-computed property name, as JavaScript spells it at run time. */
export function propertyKey(name: ts.PropertyName): string | undefined {
  if (
    ts.isIdentifier(name) ||
    ts.isStringLiteral(name) ||
    ts.isNoSubstitutionTemplateLiteral(name)
  ) {
    return name.text;
  }
  if (ts.isNumericLiteral(name)) return String(Number(name.text));
  if (ts.isPrivateIdentifier(name)) return undefined;
  return undefined;
}
