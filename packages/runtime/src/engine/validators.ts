import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import { Ajv2020 } from "ajv/dist/2020.js";

// One compiler per JSON Schema dialect; each schema object is compiled once and kept for as
// long as the (frozen) tool that owns it, which is once per loaded deployment.
const ajv2020 = new Ajv2020({ allErrors: true, strict: false });
const ajv07 = new Ajv({ allErrors: true, strict: false });
const compiled = new WeakMap<object, ValidateFunction>();

function validatorFor(schema: object): ValidateFunction {
  let fn = compiled.get(schema);
  if (!fn) {
    const dialect = (schema as { $schema?: unknown }).$schema;
    const ajv = typeof dialect === "string" && dialect.includes("draft-07") ? ajv07 : ajv2020;
    fn = ajv.compile(schema);
    compiled.set(schema, fn);
  }
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
