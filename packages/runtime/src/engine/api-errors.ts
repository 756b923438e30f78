import { OpenComputerError } from "@opencomputer/agent";

/** The resource does not exist (or is not visible to the caller): HTTP 404. */
export class NotFoundError extends OpenComputerError {
  constructor(what: string, id: string) {
    super("not_found", `No ${what} ${id}`, { path: what, id });
  }
}

/** The request conflicts with the current state (e.g. a turn for an ended session): HTTP 409. */
export class ConflictError extends OpenComputerError {}
