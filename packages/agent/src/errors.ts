// Every error the platform raises carries a stable `code` (for programs), a message a person
// can act on, and, where it applies, the place at fault (a tool name, a field, a JSON path).

export interface ErrorDetails {
  /** The JSON path, field or file position at fault, e.g. `$.items[3].price` or `input`. */
  path?: string;
  /** Anything else a program may want to branch on. */
  [key: string]: unknown;
}

export class OpenComputerError extends Error {
  readonly code: string;
  readonly details: ErrorDetails;

  constructor(code: string, message: string, details: ErrorDetails = {}, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
    this.details = details;
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
