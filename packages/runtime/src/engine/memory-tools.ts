// The model's memory tools: `memory_save` for read-write document bindings, `memory_read` and
// `memory_list` for collection bindings, offered only for resources the render selected with
// `useMemory`. Outcomes the model can act on (saved, conflict, rejected) are tool results;
// malformed arguments are tool errors (docs/memory.md).

import type { LanguageModelV3FunctionTool } from "@ai-sdk/provider";
import type { JsonValue } from "@opencomputer/agent";
import type { RenderedAgent } from "../ports/agent-execution.ts";
import { MemoryError } from "../ports/memory-errors.ts";
import { MEMORY_LIMITS } from "../ports/memory-rules.ts";
import type { AgentSaveOutcome, MemoryDocumentRecord } from "../ports/memory-store.ts";
import type { ToolCallRecord } from "../ports/records.ts";
import type { NewEvent } from "../ports/store.ts";
import {
  addHttpMemoryTools,
  executeHttpMemoryCall,
  httpMemoryModelTool,
} from "./memory-http-tools.ts";
import { type Recalled, type RecalledBinding, recallOf } from "./memory-recall.ts";
import { commitFailure, commitSuccess } from "./tool-call.ts";
import type { TurnScope } from "./turn-scope.ts";

export const MEMORY_SAVE = "memory_save";
export const MEMORY_READ = "memory_read";
export const MEMORY_LIST = "memory_list";

type MemoryTool = typeof MEMORY_SAVE | typeof MEMORY_READ | typeof MEMORY_LIST;

const BUILT_IN: ReadonlySet<string> = new Set([MEMORY_SAVE, MEMORY_READ, MEMORY_LIST]);

/** The resources of this render each memory tool may target, in binding order. */
function eligible(render: RenderedAgent, recalled: Recalled, tool: MemoryTool): RecalledBinding[] {
  const out: RecalledBinding[] = [];
  for (const resource of render.memory) {
    const entry = recalled.bound.get(resource);
    if (!entry) continue;
    const { scope, access } = entry.binding;
    if (
      tool === MEMORY_SAVE
        ? scope === "document" && access === "read-write"
        : scope === "collection"
    ) {
      out.push(entry);
    }
  }
  return out;
}

/** The memory tools this render offers, by name, with their targets. */
export function memoryToolsOf(render: RenderedAgent): Map<string, RecalledBinding[]> {
  const tools = new Map<string, RecalledBinding[]>();
  const recalled = recallOf(render);
  if (!recalled || render.memory.length === 0) return tools;
  for (const tool of [MEMORY_SAVE, MEMORY_READ, MEMORY_LIST] as const) {
    const targets = eligible(render, recalled, tool);
    if (targets.length > 0) tools.set(tool, targets);
  }
  addHttpMemoryTools(render, recalled, tools);
  return tools;
}

/** The model-facing definition of one memory tool. */
export function memoryModelTool(
  name: string,
  targets: readonly RecalledBinding[],
): LanguageModelV3FunctionTool {
  if (!BUILT_IN.has(name)) return httpMemoryModelTool(name, targets);
  const resources = targets.map((t) => t.binding.resource);
  const guidance = targets
    .map((t) => `- ${t.binding.resource}: ${t.declaration?.description ?? ""}`.trimEnd())
    .join("\n");
  const memory = {
    type: "string",
    enum: resources,
    description: "The memory resource; required when more than one is listed",
  };
  const required = resources.length > 1 ? ["memory"] : [];
  const schema =
    name === MEMORY_SAVE
      ? {
          type: "object",
          properties: {
            memory,
            text: { type: "string", description: "The document's whole new text (replaces it)" },
            summary: { type: "string", description: 'A short summary; omit to keep, "" to clear' },
          },
          required: ["text", ...required],
          additionalProperties: false,
        }
      : name === MEMORY_READ
        ? {
            type: "object",
            properties: { memory, id: { type: "string", description: "The document id" } },
            required: ["id", ...required],
            additionalProperties: false,
          }
        : {
            type: "object",
            properties: {
              memory,
              cursor: { type: "string", description: "nextCursor of the previous page" },
            },
            required,
            additionalProperties: false,
          };
  const what =
    name === MEMORY_SAVE
      ? "Replace the text of a saved memory document. A save made after someone else changed the document returns status conflict with the current content: reconcile and save again in a later step."
      : name === MEMORY_READ
        ? "Read one document of a memory collection in full."
        : "List the documents of a memory collection, a page at a time.";
  return {
    type: "function",
    name,
    description: `${what}\nMemory resources:\n${guidance}`,
    inputSchema: schema as LanguageModelV3FunctionTool["inputSchema"],
  };
}

/** Runs one memory tool call of `render`'s step; its outcome is committed like any tool's. */
export async function executeMemoryCall(
  scope: TurnScope,
  call: ToolCallRecord,
  targets: readonly RecalledBinding[],
): Promise<void> {
  const args = call.input;
  if (typeof args !== "object" || args === null || Array.isArray(args)) {
    return commitFailure(scope, call, `The arguments for ${call.tool} are not a JSON object`);
  }
  const input = args as Record<string, JsonValue>;
  if (!BUILT_IN.has(call.tool)) {
    const chosen = chooseTarget(call.tool, input.memory, targets, scope);
    if (typeof chosen === "string") return commitFailure(scope, call, chosen);
    if ("status" in chosen) return commitSuccess(scope, call, chosen as unknown as JsonValue);
    return executeHttpMemoryCall(scope, call, chosen, input);
  }
  const allowed =
    call.tool === MEMORY_SAVE
      ? ["memory", "text", "summary"]
      : call.tool === MEMORY_READ
        ? ["memory", "id"]
        : ["memory", "cursor"];
  const unknown = Object.keys(input).find((k) => !allowed.includes(k));
  if (unknown) {
    return commitFailure(
      scope,
      call,
      `${call.tool} has no argument ${JSON.stringify(unknown)}; it takes ${allowed.join(", ")}`,
    );
  }
  const chosen = chooseTarget(call.tool, input.memory, targets, scope);
  if (typeof chosen === "string") return commitFailure(scope, call, chosen);
  if ("status" in chosen) return commitSuccess(scope, call, chosen as unknown as JsonValue);
  try {
    if (call.tool === MEMORY_SAVE) return await save(scope, call, input, chosen);
    if (call.tool === MEMORY_READ) return await read(scope, call, input, chosen);
    return await list(scope, call, input, chosen);
  } catch (error) {
    if (error instanceof MemoryError && error.code === "invalid_cursor") {
      return commitSuccess(scope, call, { status: "rejected", reason: "invalid_cursor" });
    }
    throw error;
  }
}

type Rejection = { status: "rejected"; reason: "not_bound" | "read_only"; bound: string[] };

function chooseTarget(
  tool: string,
  named: JsonValue | undefined,
  targets: readonly RecalledBinding[],
  scope: TurnScope,
): RecalledBinding | Rejection | string {
  const bound = targets.map((t) => t.binding.resource);
  if (named === undefined) {
    if (targets.length === 1) return targets[0]!;
    return `${tool}: name the memory resource in "memory": one of ${bound.join(", ")}`;
  }
  if (typeof named !== "string") return `${tool}: "memory" must be a string`;
  const target = targets.find((t) => t.binding.resource === named);
  if (target) return target;
  const other = scope.memory?.bindings.find((b) => b.resource === named);
  return { status: "rejected", reason: other ? "read_only" : "not_bound", bound };
}

async function save(
  scope: TurnScope,
  call: ToolCallRecord,
  input: Record<string, JsonValue>,
  target: RecalledBinding,
) {
  const { text, summary } = input;
  if (typeof text !== "string")
    return commitFailure(scope, call, `memory_save: "text" must be a string`);
  if (summary !== undefined && typeof summary !== "string") {
    return commitFailure(scope, call, `memory_save: "summary" must be a string`);
  }
  const { binding } = target;
  const doc = `${binding.resource}/${binding.id!}`;
  const conflicts = scope.memory?.conflicts;
  const outcome = await scope.ctx.memory!.saveByAgent(
    scope.sessionId,
    binding,
    binding.id!,
    summary === undefined ? { text } : { text, summary },
    conflicts?.get(doc) ?? target.revision!,
  );
  if (outcome.status === "conflict" && scope.memory) {
    scope.memory.conflicts ??= new Map();
    scope.memory.conflicts.set(doc, outcome.document.revision);
  } else if (outcome.status === "saved") {
    conflicts?.delete(doc);
  }
  const events: NewEvent[] = [];
  if (outcome.status === "saved") {
    events.push({
      type: "memory.saved",
      turnId: scope.turn.id,
      data: {
        resource: binding.resource,
        documentId: binding.id!,
        revision: outcome.document.revision,
        bytes: outcome.document.bytes,
      },
    });
  }
  return commitSuccess(scope, call, saveResult(outcome, binding.resource), events);
}

/** What the model sees of a save. */
function saveResult(outcome: AgentSaveOutcome, resource: string): JsonValue {
  switch (outcome.status) {
    case "saved":
      return {
        status: "saved",
        revision: outcome.document.revision,
        bytes: outcome.document.bytes,
      };
    case "conflict":
      return {
        status: "conflict",
        text: outcome.document.text,
        summary: outcome.document.summary,
        revision: outcome.document.revision,
        message: `${resource} changed since this step began (now revision ${outcome.document.revision}); the current text is included: reconcile it with your change and save again in the next step`,
      };
    default: {
      let message: string;
      if (outcome.reason === "too_large") {
        message = `the ${outcome.field} is ${outcome.bytes} bytes; the limit is ${outcome.maxBytes}: shorten it and save again`;
      } else if (outcome.reason === "agent_writes_disabled") {
        message = `${resource} is frozen: its owner disabled agent writes, so nothing was saved. Do not retry; tell the user if the note matters`;
      } else if (outcome.reason === "not_found") {
        message = `${resource}'s document was deleted; nothing was saved`;
      } else {
        message = "this session's memory access was revoked (the session ended); nothing was saved";
      }
      return { ...outcome, message } as JsonValue;
    }
  }
}

async function read(
  scope: TurnScope,
  call: ToolCallRecord,
  input: Record<string, JsonValue>,
  target: RecalledBinding,
) {
  if (typeof input.id !== "string")
    return commitFailure(scope, call, `memory_read: "id" must be a string`);
  const doc = await scope.ctx.memory!.getDocument(target.binding, input.id);
  if (!doc || doc.deleted)
    return commitSuccess(scope, call, { status: "rejected", reason: "not_found" });
  return commitSuccess(scope, call, { ...entry(doc), text: doc.text });
}

async function list(
  scope: TurnScope,
  call: ToolCallRecord,
  input: Record<string, JsonValue>,
  target: RecalledBinding,
) {
  const cursor = input.cursor;
  if (cursor !== undefined && typeof cursor !== "string") {
    return commitFailure(scope, call, `memory_list: "cursor" must be a string`);
  }
  const page = await scope.ctx.memory!.listDocuments(target.binding, {
    limit: MEMORY_LIMITS.listPage,
    ...(cursor ? { cursor } : {}),
  });
  return commitSuccess(scope, call, {
    documents: page.documents.map(entry),
    nextCursor: page.nextCursor,
  });
}

function entry(doc: MemoryDocumentRecord) {
  return {
    id: doc.id,
    title: doc.title,
    summary: doc.summary,
    revision: doc.revision,
    updatedAt: doc.updatedAt,
  };
}
