// What a secret's slot and value may be: two environments, names as `useSecret` accepts them,
// and values that can travel as a header value.

import { SECRET_NAME_PATTERN } from "@opencomputer/agent/internal";
import { SecretError } from "./secret-error.ts";

export const SECRET_ENVIRONMENTS = ["development", "production"] as const;
export type SecretEnvironment = (typeof SECRET_ENVIRONMENTS)[number];
/** Values are sent as header values: bounded, and without line breaks. */
export const SECRET_VALUE_MAX_BYTES = 16 * 1024;

export function checkEnvironment(environment: string): asserts environment is SecretEnvironment {
  if (!(SECRET_ENVIRONMENTS as readonly string[]).includes(environment)) {
    throw new SecretError(
      "secret_environment_invalid",
      `environment must be ${SECRET_ENVIRONMENTS.join(" or ")}; got ${JSON.stringify(environment)}`,
      { path: "environment" },
    );
  }
}

export function checkName(name: string): void {
  if (typeof name !== "string" || !SECRET_NAME_PATTERN.test(name)) {
    throw new SecretError(
      "secret_name_invalid",
      `secret names are capital letters, digits and underscores, starting with a letter, at most 128 characters (${String(SECRET_NAME_PATTERN)}); got ${JSON.stringify(name)}`,
      { path: "name" },
    );
  }
}

export function checkValue(value: string): void {
  if (typeof value !== "string" || value.length === 0) {
    throw new SecretError("secret_value_invalid", "the secret value is empty", { path: "value" });
  }
  if (/[\r\n\0]/.test(value)) {
    throw new SecretError(
      "secret_value_invalid",
      "the secret value contains a line break or NUL; secrets are sent as header values, which cannot",
      { path: "value" },
    );
  }
  if (Buffer.byteLength(value, "utf8") > SECRET_VALUE_MAX_BYTES) {
    throw new SecretError(
      "secret_value_invalid",
      `the secret value is larger than ${SECRET_VALUE_MAX_BYTES} bytes`,
      { path: "value" },
    );
  }
}
