// The runtime's MCP client (the McpConnector port) on the official SDK: one Client over the
// Streamable HTTP transport per turn and server. Each operation runs with its own egress grant
// (transport-fetch.ts), its time limit and the turn's abort signal, which the SDK turns into a
// notifications/cancelled to the server. Every failure becomes an McpError with a stable code.

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { JsonSchema, JsonValue } from "@opencomputer/agent";
import type {
  McpCallOutcome,
  McpConnector,
  McpFailureCode,
  McpOperationOptions,
  McpServerDeclaration,
  McpSession,
  McpToolInfo,
} from "@opencomputer/runtime";
import { mcpFailure } from "./failures.ts";
import {
  operationEgress,
  settlePending,
  type TransportState,
  transportFetch,
} from "./transport-fetch.ts";

export interface McpConnectorOptions {
  /** Allows plain-http servers on 127.0.0.1/localhost (dev mode). */
  allowLoopbackHttp?: boolean;
  /** How the runtime introduces itself to servers. */
  clientInfo?: { name: string; version: string };
}

/** Pages of tools/list followed at most; a server with more pages is cut there. */
const MAX_LIST_PAGES = 16;
const MAX_ERROR_TEXT = 2000;

export function createMcpConnector(options: McpConnectorOptions = {}): McpConnector {
  const clientInfo = options.clientInfo ?? { name: "opencomputer-runtime", version: "0.1.0" };
  return {
    async open(server, operation) {
      const state: TransportState = { fallback: undefined, pending: new Set() };
      const allowLoopbackHttp = options.allowLoopbackHttp ?? false;
      const transport = new StreamableHTTPClientTransport(new URL(server.url), {
        fetch: transportFetch(server, { allowLoopbackHttp }, state),
      });
      const client = new Client(clientInfo);
      // Transport errors also reject the request they belong to; nothing else listens here.
      client.onerror = () => {};
      try {
        await within(operation, () =>
          client.connect(transport, { signal: operation.signal, timeout: operation.timeoutMs }),
        );
      } catch (error) {
        await client.close().catch(() => {});
        throw mcpFailure(error, server, operation.signal, "connect");
      }
      return session(server, client, state);
    },
  };
}

function session(server: McpServerDeclaration, client: Client, state: TransportState): McpSession {
  return {
    async listTools(operation) {
      const tools: McpToolInfo[] = [];
      let cursor: string | undefined;
      try {
        for (let page = 0; page < MAX_LIST_PAGES; page++) {
          const listed = await within(operation, () =>
            client.listTools(cursor === undefined ? {} : { cursor }, requestOptions(operation)),
          );
          for (const tool of listed.tools) {
            tools.push({
              name: tool.name,
              description: tool.description ?? tool.title ?? tool.name,
              inputSchema: tool.inputSchema as JsonSchema,
            });
          }
          cursor = listed.nextCursor;
          if (!cursor) break;
        }
      } catch (error) {
        throw mcpFailure(error, server, operation.signal, "list");
      }
      return tools;
    },
    async callTool(name, args, operation): Promise<McpCallOutcome> {
      state.fallback = operation.egress;
      try {
        const result = await within(operation, () =>
          client.callTool({ name, arguments: args }, undefined, {
            ...requestOptions(operation),
            onprogress: (progress) =>
              operation.onProgress(JSON.parse(JSON.stringify(progress)) as JsonValue),
          }),
        );
        if (result.isError) {
          return {
            ok: false,
            code: "mcp_tool_error",
            message: `MCP tool ${name} of server "${server.id}" reported an error: ${textOf(result.content).slice(0, MAX_ERROR_TEXT) || "(no message)"}`,
          };
        }
        return { ok: true, output: outputOf(result) };
      } catch (error) {
        // A cancelled or timed-out call: the SDK is telling the server; let that arrive while
        // this call's grant is still live.
        await settlePending(state);
        const failure = mcpFailure(error, server, operation.signal, "call", name);
        return { ok: false, code: failure.code as McpFailureCode, message: failure.message };
      }
    },
    async close() {
      await settlePending(state);
      await client.close().catch(() => {});
    },
  };
}

function within<T>(operation: McpOperationOptions, fn: () => Promise<T>): Promise<T> {
  return operationEgress.run(operation.egress, fn);
}

function requestOptions(operation: McpOperationOptions) {
  return { signal: operation.signal, timeout: operation.timeoutMs };
}

/** What the model gets: structured content when the tool gives it, else its text, else the parts. */
function outputOf(result: Record<string, unknown>): JsonValue {
  const structured = result.structuredContent;
  if (typeof structured === "object" && structured !== null) return toJson(structured);
  const content = Array.isArray(result.content) ? result.content : [];
  if (content.every((part) => (part as { type?: unknown }).type === "text")) {
    return textOf(content);
  }
  return toJson(content);
}

function textOf(content: unknown): string {
  if (!Array.isArray(content)) return "";
  return content
    .filter((part): part is { type: "text"; text: string } => part?.type === "text")
    .map((part) => part.text)
    .join("\n");
}

function toJson(value: unknown): JsonValue {
  return JSON.parse(JSON.stringify(value)) as JsonValue;
}
