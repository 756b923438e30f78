// Every error the platform raises carries a stable `code` (for programs), a message a person
// can act on, and, where it applies, the place at fault (a tool name, a field, a JSON path).

export interface ErrorDetails {
  /** The JSON path, field or file position at fault, e.g. `$.items[3].price` or `input`. */
  path?: string;
  /** Anything else a program may want to branch on. */
  [key: string]: unknown;
}

// Marks every platform error with its class names so `instanceof` also recognises errors
// thrown by another copy of this package (the runtime and user code may load two).
const ERROR_BRAND = Symbol.for("opencomputer.error");

export class OpenComputerError extends Error {
  readonly code: string;
  readonly details: ErrorDetails;

  constructor(code: string, message: string, details: ErrorDetails = {}, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
    this.details = details;
    const names: string[] = [];
    for (
      let c: unknown = new.target;
      typeof c === "function" && c !== Error;
      c = Object.getPrototypeOf(c)
    ) {
      names.push(c.name);
    }
    Object.defineProperty(this, ERROR_BRAND, { value: names });
  }

  // `this` is the class on the right of `instanceof`, which is what must be matched.
  static override [Symbol.hasInstance](value: unknown): boolean {
    // biome-ignore lint/complexity/noThisInStatic: the receiver is the class being tested
    if (Function.prototype[Symbol.hasInstance].call(this, value)) return true;
    if (typeof value !== "object" || value === null) return false;
    const names = (value as { [ERROR_BRAND]?: unknown })[ERROR_BRAND];
    // biome-ignore lint/complexity/noThisInStatic: the receiver is the class being tested
    return Array.isArray(names) && names.includes(this.name);
  }

  get path(): string | undefined {
    return this.details.path;
  }

  toJSON(): { code: string; message: string; path?: string } {
    return this.details.path === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, path: this.details.path };
  }
}

/** `defineTool` refused a definition; the message names the tool and the field. */
export class ToolDefinitionError extends OpenComputerError {}

/** A hook was called outside a render, or a render broke a rule. */
export class RenderError extends OpenComputerError {}

/** A value is not JSON-compatible; `path` is the JSON path of the first offending value. */
export class JsonCompatibilityError extends OpenComputerError {}
