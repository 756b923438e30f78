// Secret references: what a connection declares instead of a credential. A reference carries a
// name and nothing else; the value exists only in the control plane's secret store and is added
// to a request by the egress gateway, so agent code can pass references around freely.

import { describeValue } from "./describe-value.ts";
import { OpenComputerError } from "./errors.ts";

export const SECRET_NAME_PATTERN = /^[A-Z][A-Z0-9_]{0,127}$/;

// Registry symbols, so references made by one copy of this package are recognised by another.
const SECRET_BRAND = Symbol.for("opencomputer.secret");
const SECRET_HEADER_BRAND = Symbol.for("opencomputer.secretHeader");

/** A secret named `name`, as `useSecret` returns it; never its value. */
export interface SecretRef {
  readonly name: string;
}

/** A header value built from a secret: `${prefix}${value}${suffix}`. */
export interface SecretHeader {
  readonly secret: string;
  readonly prefix: string;
  readonly suffix: string;
}

/** How a secret header value is stored in a deployment manifest (and read by the gateway). */
export interface SecretHeaderDeclaration {
  secret: string;
  prefix?: string;
  suffix?: string;
}

/** A secret refused or misused; `details.path` names the argument. */
export class SecretReferenceError extends OpenComputerError {}

/** A reference to the secret `name` of the session's environment. */
export function useSecret(name: string): SecretRef {
  if (typeof name !== "string" || !SECRET_NAME_PATTERN.test(name)) {
    throw new SecretReferenceError(
      "secret_name_invalid",
      `useSecret: the name must match ${String(SECRET_NAME_PATTERN)} (capital letters, digits and underscores, starting with a letter, at most 128 characters); got ${typeof name === "string" ? JSON.stringify(name) : describeValue(name)}`,
      { path: "name" },
    );
  }
  const ref = { name };
  Object.defineProperty(ref, SECRET_BRAND, { value: true });
  // Printing a reference shows what it is, so nobody mistakes it for a missing value.
  Object.defineProperty(ref, "toString", { value: () => `[secret ${name}]` });
  return Object.freeze(ref);
}

/** A header value made of the secret between `prefix` and `suffix`, e.g. `Token <value>`. */
export function secretHeader(
  secret: SecretRef,
  options: { prefix?: string; suffix?: string } = {},
): SecretHeader {
  if (!isSecretRef(secret)) {
    throw new SecretReferenceError(
      "secret_reference_invalid",
      `secretHeader: the first argument must come from useSecret("NAME"); got ${describeValue(secret)}`,
      { path: "secret" },
    );
  }
  const prefix = checkAffix(options?.prefix, "prefix");
  const suffix = checkAffix(options?.suffix, "suffix");
  const header = { secret: secret.name, prefix, suffix };
  Object.defineProperty(header, SECRET_HEADER_BRAND, { value: true });
  return Object.freeze(header);
}

/** `Authorization: Bearer <secret>`. */
export function bearer(secret: SecretRef): SecretHeader {
  return secretHeader(secret, { prefix: "Bearer " });
}

export function isSecretRef(value: unknown): value is SecretRef {
  return typeof value === "object" && value !== null && Object.hasOwn(value, SECRET_BRAND);
}

export function isSecretHeader(value: unknown): value is SecretHeader {
  return typeof value === "object" && value !== null && Object.hasOwn(value, SECRET_HEADER_BRAND);
}

function checkAffix(value: unknown, field: "prefix" | "suffix"): string {
  if (value === undefined) return "";
  if (typeof value !== "string" || /[\r\n\0]/.test(value) || value.length > 256) {
    throw new SecretReferenceError(
      "secret_header_invalid",
      `secretHeader: "${field}" must be a string of at most 256 characters without line breaks; got ${describeValue(value)}`,
      { path: `options.${field}` },
    );
  }
  return value;
}
