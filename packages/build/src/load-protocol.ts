// The messages between the build and the child process that loads the tool modules. The child
// runs user code, so it is a separate process: a module that hangs or kills its process at load
// costs the build a timeout and an error, not the build itself.

import type { McpServerDeclaration, ToolKind } from "@opencomputer/agent";
import type { ConnectionDeclaration } from "@opencomputer/agent/internal";
import type { JsonValue } from "./literal.ts";

/** Parent → child, once: the modules to import, in order (dependencies first). */
export interface LoadRequest {
  root: string;
  modules: string[];
}

/** What loading reveals of one exported tool. */
export interface LoadedTool {
  /** The export names it is reachable under (a tool may be exported twice). */
  exports: string[];
  name: string;
  description: string;
  input?: JsonValue;
  output?: JsonValue;
  result: boolean;
  kind: ToolKind;
}

export interface LoadFailure {
  name: string;
  message: string;
  /** A `ToolDefinitionError`'s code (from defineTool), passed through as the build error code. */
  code?: string;
  /** The first stack frame inside the project, when there is one. */
  location?: { file: string; line: number; column: number };
}

/** A defineMcpServer() call made while a module loaded. */
export interface LoadedMcpServer {
  declaration: McpServerDeclaration;
  /** The connection given as an object, recorded with the agent's connections. */
  connection?: ConnectionDeclaration;
  /** The call's position in the project, when the stack shows it. */
  location?: { file: string; line: number; column: number };
}

/** Child → parent. */
export type LoadMessage =
  /** The child is listening; the parent sends the request only then, so none is lost. */
  | { type: "ready" }
  | { type: "start"; module: string }
  | { type: "loaded"; module: string; tools: LoadedTool[]; mcpServers?: LoadedMcpServer[] }
  /** `error` is absent when the module failed only because a module it imports did. */
  | { type: "failed"; module: string; error?: LoadFailure }
  | { type: "done" };
