// The tools an HTTP memory provider declares, offered to the model as `memory_<name>`: read
// tools to every namespace binding the render selected, write tools to read-write ones. The
// arguments are checked against the declared schema, `memory` (the resource) is taken out, and
// the provider gets the binding's partition and access and the render's recall cursor instead,
// so the model can neither pick another partition nor widen its access. The provider's failures
// fail the call (tool.failed with the code), never the turn.

import type { LanguageModelV3FunctionTool } from "@ai-sdk/provider";
import type { HttpMemoryTool, JsonValue } from "@opencomputer/agent";
import { jsonByteLength } from "@opencomputer/agent/internal";
import type { RenderedAgent } from "../ports/agent-execution.ts";
import type { ToolCallRecord } from "../ports/records.ts";
import type { NewEvent } from "../ports/store.ts";
import { callProvider, type HttpMemoryDeclaration, MemoryProviderError } from "./memory-http.ts";
import { partitionKey } from "./memory-partition.ts";
import type { Recalled, RecalledBinding } from "./memory-recall.ts";
import { commitFailure, commitSuccess } from "./tool-call.ts";
import type { TurnScope } from "./turn-scope.ts";
import { checkSchema } from "./validators.ts";

/** The model's name for a provider tool. */
export const httpToolName = (name: string) => `memory_${name}`;

function providerOf(entry: RecalledBinding): HttpMemoryDeclaration | undefined {
  const declaration = entry.declaration;
  return declaration?.provider.kind === "http" ? (declaration as HttpMemoryDeclaration) : undefined;
}

function toolOf(entry: RecalledBinding, modelName: string): HttpMemoryTool | undefined {
  return providerOf(entry)?.provider.tools.find((t) => httpToolName(t.name) === modelName);
}

/** Adds the provider tools of the render's namespace bindings to `tools`, by model name. */
export function addHttpMemoryTools(
  render: RenderedAgent,
  recalled: Recalled,
  tools: Map<string, RecalledBinding[]>,
): void {
  for (const resource of render.memory) {
    const entry = recalled.bound.get(resource);
    if (entry?.binding.scope !== "namespace") continue;
    for (const tool of providerOf(entry)?.provider.tools ?? []) {
      if (tool.access === "write" && entry.binding.access !== "read-write") continue;
      const name = httpToolName(tool.name);
      // Built-in names are reserved by defineMemory; never let a provider tool shadow one.
      if (tools.has(name) && !tools.get(name)!.every((t) => t.binding.scope === "namespace")) {
        continue;
      }
      const targets = tools.get(name) ?? [];
      targets.push(entry);
      tools.set(name, targets);
    }
  }
}

export function httpMemoryModelTool(
  name: string,
  targets: readonly RecalledBinding[],
): LanguageModelV3FunctionTool {
  const tool = toolOf(targets[0]!, name)!;
  const resources = targets.map((t) => t.binding.resource);
  const input = structuredClone(tool.input) as {
    properties?: Record<string, unknown>;
    required?: string[];
  };
  input.properties = {
    ...(input.properties ?? {}),
    memory: {
      type: "string",
      enum: resources,
      description: "The memory resource; required when more than one is listed",
    },
  };
  if (resources.length > 1) input.required = [...(input.required ?? []), "memory"];
  const guidance = targets
    .map((t) => `- ${t.binding.resource}: ${t.declaration?.description ?? ""}`.trimEnd())
    .join("\n");
  return {
    type: "function",
    name,
    description: `${tool.description}\nMemory resources:\n${guidance}`,
    inputSchema: input as LanguageModelV3FunctionTool["inputSchema"],
  };
}

/** Runs one provider tool call for the chosen binding; its outcome is committed like any tool's. */
export async function executeHttpMemoryCall(
  scope: TurnScope,
  call: ToolCallRecord,
  target: RecalledBinding,
  input: Record<string, JsonValue>,
) {
  const declaration = providerOf(target)!;
  const tool = toolOf(target, call.tool)!;
  const { memory: _resource, ...args } = input;
  const problem = checkSchema(tool.input, args, "input");
  if (problem) return commitFailure(scope, call, `Invalid input for ${call.tool}: ${problem}`);
  const { binding } = target;
  // The binding is checked before every outbound operation: an ended session sends nothing.
  const current = (await scope.ctx.memory!.sessionBindings(scope.sessionId)).find(
    (b) => b.resource === binding.resource,
  );
  if (!current || current.revokedAt !== null) {
    return commitSuccess(scope, call, {
      status: "rejected",
      reason: "session_closed",
      message: "this session's memory access was revoked (the session ended); nothing was sent",
    });
  }
  const write = tool.access === "write";
  let output: JsonValue;
  try {
    const answer = await callProvider(
      scope,
      declaration,
      {
        operation: "tool",
        operationId: `${call.callId}:${binding.resource}`,
        partition: partitionKey(binding),
        access: binding.access,
        tool: tool.name,
        arguments: args,
        ...(target.cursor !== undefined ? { cursor: target.cursor } : {}),
      },
      !write || tool.idempotent,
    );
    const body = answer.body;
    if (typeof body !== "object" || body === null || Array.isArray(body) || !("result" in body)) {
      throw new MemoryProviderError(
        "memory_provider_invalid",
        `memory ${binding.resource}: the provider's answer to ${tool.name} has no "result"`,
        { path: "result", resource: binding.resource },
      );
    }
    output = body.result ?? null;
  } catch (error) {
    if (scope.signal.aborted) return;
    if (!(error instanceof MemoryProviderError)) throw error;
    if (write && !tool.idempotent && error.uncertain) {
      // A timeout never proves a write failed: the model is told so, and the next step recalls.
      return commitSuccess(scope, call, {
        status: "uncertain",
        message: `${error.message}. The write may or may not have been stored; recall shows the current state in the next step`,
      });
    }
    return commitFailure(scope, call, `${error.code}: ${error.message}`, error.code);
  }
  if (scope.signal.aborted) return;
  const events: NewEvent[] = [];
  if (write) {
    const result = output as { revision?: unknown } | null;
    events.push({
      type: "memory.saved",
      turnId: scope.turn.id,
      data: {
        resource: binding.resource,
        documentId: binding.id!,
        revision:
          typeof result?.revision === "string"
            ? result.revision
            : `${call.callId}:${binding.resource}`,
        bytes: jsonByteLength(args),
        tool: tool.name,
      },
    });
  }
  return commitSuccess(scope, call, output, events);
}
