// A refusal the gateway sends back to agent code: a stable code, a message naming what to fix,
// and the argument of connection.fetch at fault. Never a secret, never the origin's raw error.

export class EgressRefusal extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly path?: string,
  ) {
    super(message);
  }
}
