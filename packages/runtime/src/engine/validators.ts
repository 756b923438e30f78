import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import { Ajv2020 } from "ajv/dist/2020.js";

// One compiler per JSON Schema dialect, and each schema compiled once. A schema is found by its
// object first (in-process tools keep theirs), then by its JSON text: a render from a worker
// process arrives as new objects every time, and ajv keeps every schema object it compiles, so
// compiling per object would compile each tool call's schema again and grow without end.
const ajv2020 = new Ajv2020({ allErrors: true, strict: false });
const ajv07 = new Ajv({ allErrors: true, strict: false });
const byObject = new WeakMap<object, ValidateFunction>();
const byText = new Map<string, ValidateFunction>();

/** The compiled validator of `schema`; the same function for every schema with the same JSON. */
export function validatorFor(schema: object): ValidateFunction {
  let fn = byObject.get(schema);
  if (fn) return fn;
  const text = JSON.stringify(schema);
  fn = byText.get(text);
  if (!fn) {
    const dialect = (schema as { $schema?: unknown }).$schema;
    const ajv = typeof dialect === "string" && dialect.includes("draft-07") ? ajv07 : ajv2020;
    fn = ajv.compile(schema);
    byText.set(text, fn);
  }
  byObject.set(schema, fn);
  return fn;
}

/** Validates a value; returns null when valid, else a message naming each failing path. */
export function checkSchema(schema: object, value: unknown, root: string): string | null {
  const fn = validatorFor(schema);
  if (fn(value)) return null;
  return describeErrors(fn.errors ?? [], root);
}

function describeErrors(errors: ErrorObject[], root: string): string {
  return errors
    .slice(0, 5)
    .map((e) => {
      const path = e.instancePath
        ? `${root}${e.instancePath.replace(/\/([^/]+)/g, (_m, k: string) => (/^\d+$/.test(k) ? `[${k}]` : `.${k}`))}`
        : root;
      const extra =
        e.keyword === "additionalProperties" ? ` (${String(e.params.additionalProperty)})` : "";
      return `${path} ${e.message ?? "is invalid"}${extra}`;
    })
    .join("; ");
}
