import { ModelError } from "@opencomputer/runtime";
import type { RetryOptions } from "./retry.ts";

/** Where keys and base URLs are read from; `process.env` unless a caller passes its own. */
export type Env = Readonly<Record<string, string | undefined>>;

/** What every provider accepts; keys and URLs come from here or the environment, never agents. */
export interface ProviderConfig {
  apiKey?: string;
  baseURL?: string;
  /** Extra HTTP headers on every request (e.g. for a proxy). */
  headers?: Record<string, string>;
  env?: Env;
  retry?: Omit<RetryOptions, "modelId" | "secrets">;
}

/** The key, or a model_unavailable error naming the variable to set (never any key text). */
export function requireKey(value: string | undefined, variable: string, modelId: string): string {
  if (value) return value;
  throw new ModelError(
    "model_unavailable",
    `${modelId} needs an API key: set ${variable} in the runtime's environment`,
    modelId,
  );
}

/** Empty variables count as unset, the way shells usually mean them. */
export function setting(...values: (string | undefined)[]): string | undefined {
  return values.find((value) => value !== undefined && value.trim() !== "");
}
