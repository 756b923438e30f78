// Refusals of the secret store and its inputs: a stable code, what to fix, the field at fault.

import { OpenComputerError } from "@opencomputer/agent";

export class SecretError extends OpenComputerError {}
