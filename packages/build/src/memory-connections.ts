// An HTTP memory provider is reached through its connection, and the egress gateway allows only
// the connections a session's deployment records. So the connection given to httpMemory is
// recorded with the agent's connections, as MCP servers' inline connections are; one declared
// differently under the same id in connections/ is an error.

import type { ConnectionDeclaration, MemoryDeclaration } from "@opencomputer/agent/internal";
import type { BuildError } from "./errors.ts";

export function withMemoryConnections(
  agentId: string,
  memory: readonly MemoryDeclaration[],
  declared: readonly ConnectionDeclaration[],
  errors: BuildError[],
): ConnectionDeclaration[] {
  const all = [...declared];
  for (const resource of memory) {
    if (resource.provider.kind !== "http") continue;
    const connection = resource.provider.connection;
    const same = all.find((c) => c.id === connection.id);
    if (!same) all.push(connection);
    else if (JSON.stringify(same) !== JSON.stringify(connection)) {
      errors.push({
        code: "memory_connection_mismatch",
        message: `Agent "${agentId}": the connection "${connection.id}" given to httpMemory for the memory "${resource.id}" differs from another connection of that id; use one declaration`,
        file: `opencomputer/agents/${agentId}/memory.ts`,
        line: 1,
        column: 1,
      });
    }
  }
  return all;
}
