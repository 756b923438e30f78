import { type ParseArgsConfig, parseArgs } from "node:util";
import { OpenComputerError } from "@opencomputer/agent";

type Options = NonNullable<ParseArgsConfig["options"]>;
type Parsed<O extends Options> = ReturnType<
  typeof parseArgs<{ args: string[]; options: O; allowPositionals: true; strict: true }>
>;

/**
 * The one argument parser of every command: parseArgs in strict mode with positionals, its
 * errors turned into usage errors (followed by `usage` when given, so the person sees how to
 * call the command).
 */
export function parse<O extends Options>(argv: string[], options: O, usage?: string): Parsed<O> {
  try {
    return parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  } catch (error) {
    const message = (error as Error).message;
    throw new OpenComputerError("usage", usage ? `${message}\n${usage}` : message);
  }
}

/** The positional at `index`, or a usage error naming what is missing. */
export function need(positionals: string[], index: number, what: string, usage: string): string {
  const value = positionals[index];
  if (value === undefined || value === "")
    throw new OpenComputerError("usage", `Missing ${what}. Usage: ${usage}`);
  return value;
}

/** Refuses positionals beyond `count`. */
export function noExtra(positionals: string[], count: number, usage: string): void {
  if (positionals.length > count)
    throw new OpenComputerError(
      "usage",
      `Unexpected argument "${positionals[count]}". Usage: ${usage}`,
    );
}

/** A positive integer option, or a usage error. */
export function integer(value: string | undefined, name: string, min: number): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value) || Number(value) < min)
    throw new OpenComputerError("usage", `--${name} must be an integer ≥ ${min}, got "${value}"`);
  return Number(value);
}

export function out(line: string): void {
  process.stdout.write(`${line}\n`);
}

export function json(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value)}\n`);
}

export function short(value: unknown, max = 120): string {
  const text = typeof value === "string" ? value : (JSON.stringify(value) ?? "");
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
