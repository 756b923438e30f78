// A session's memory bindings: parsed from `POST /sessions`'s `memory`, admitted against what
// the deployment declares and what the memory store holds, recorded before the session itself
// (so a session never exists without its bindings), and shown in the session view.

import type { MemoryDeclaration } from "@opencomputer/agent/internal";
import type { MemoryBindingView, SessionStatus } from "@opencomputer/protocol";
import { canonicalJson } from "../digest.ts";
import { MemoryError } from "../ports/memory-errors.ts";
import { MEMORY_LIMITS } from "../ports/memory-rules.ts";
import type { MemoryBindingRecord, MemoryStore, NewMemoryBinding } from "../ports/memory-store.ts";
import type { EngineContext } from "./context.ts";
import { InputError } from "./input.ts";
import { partitionKey } from "./memory-partition.ts";

/** A binding as the client asked for it, checked for shape (not yet against the deployment). */
export interface RequestedBinding {
  resource: string;
  scope: "document" | "collection" | "namespace";
  id: string | null;
  access: "read" | "read-write";
}

const fail = (path: string, message: string, code = "invalid_input"): never => {
  throw new InputError(code, `${path}: ${message}`, { path });
};

/** `memory` of a create request: `{ <resource>: { scope, id?, access? } }`, in key order. */
export function parseMemoryOption(raw: unknown): RequestedBinding[] {
  if (raw === undefined) return [];
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    return fail("memory", "must be an object of resource ids to bindings");
  }
  const entries = Object.entries(raw);
  if (entries.length > MEMORY_LIMITS.bindingsPerSession) {
    fail(
      "memory",
      `binds ${entries.length} resources; at most ${MEMORY_LIMITS.bindingsPerSession}`,
    );
  }
  return entries.map(([resource, value]) => {
    const at = `memory.${resource}`;
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
      return fail(at, "must be { scope, id?, access? }");
    }
    const b = value as Record<string, unknown>;
    for (const key of Object.keys(b)) {
      if (key !== "scope" && key !== "id" && key !== "access") {
        fail(`${at}.${key}`, "is not a field of a binding (scope, id, access)");
      }
    }
    const scope = b.scope;
    if (scope !== "document" && scope !== "collection" && scope !== "namespace") {
      return fail(`${at}.scope`, `must be "document", "collection" or "namespace"`);
    }
    const access = b.access ?? "read";
    if (access !== "read" && access !== "read-write") {
      return fail(`${at}.access`, `must be "read" or "read-write"`);
    }
    if (scope === "collection") {
      if (b.id !== undefined) fail(`${at}.id`, "a collection binding has no id");
      if (access !== "read") fail(`${at}.access`, "collections are read-only");
      return { resource, scope, id: null, access };
    }
    if (typeof b.id !== "string" || !/^[A-Za-z0-9_-]{1,128}$/.test(b.id)) {
      return fail(`${at}.id`, `must be 1-128 ASCII letters, digits, "-" or "_"`);
    }
    return { resource, scope, id: b.id, access };
  });
}

/**
 * Checks requested bindings against the deployment's declarations and the store, registers the
 * declared resources' limits, and records the bindings under `sessionId`. Refusals are
 * InputErrors naming `memory.<resource>`; nothing is bound then.
 */
export async function admitBindings(
  ctx: EngineContext,
  where: { sessionId: string; projectId: string; environment: string },
  agent: { agentId: string; deploymentId: string },
  requested: readonly RequestedBinding[],
): Promise<void> {
  const memory = ctx.memory;
  if (!memory) {
    return fail("memory", "this runtime has no memory store; start it with one to bind memory");
  }
  const declared = new Map<string, MemoryDeclaration>();
  for (const d of (await ctx.agents.memory?.(agent.agentId, agent.deploymentId)) ?? []) {
    declared.set(d.id, d);
  }
  const bindings: NewMemoryBinding[] = [];
  for (const b of requested) {
    const at = `memory.${b.resource}`;
    const declaration = declared.get(b.resource);
    if (!declaration) {
      const names = [...declared.keys()];
      fail(
        at,
        `agent ${agent.agentId} (deployment ${agent.deploymentId}) declares no memory resource ${JSON.stringify(b.resource)} with defineMemory(); declared: ${names.length > 0 ? names.join(", ") : "none"}`,
      );
    }
    const kind = declaration!.provider.kind;
    if ((kind === "http") !== (b.scope === "namespace")) {
      fail(
        `${at}.scope`,
        kind === "http"
          ? `${b.resource} is kept by an HTTP provider: bind a "namespace"`
          : `${b.resource} holds documents: bind a "document" or a "collection"`,
      );
    }
    await memory.putResource(where.projectId, where.environment, b.resource, {
      kind,
      maxBytes: declaration!.provider.maxBytes,
    });
    if (b.scope === "document") {
      const key = { ...where, resource: b.resource };
      const doc = await memory.getDocument(key, b.id!);
      if (!doc || doc.deleted) {
        fail(
          `${at}.id`,
          doc
            ? `the document ${JSON.stringify(b.id)} was deleted; its id stays reserved, use a new one`
            : `no document ${JSON.stringify(b.id)} in ${b.resource} (${where.environment}); create it first (opencomputer memory create ${b.resource} ${b.id})`,
        );
      }
    }
    bindings.push({
      projectId: where.projectId,
      environment: where.environment,
      resource: b.resource,
      scope: b.scope,
      id: b.id,
      access: b.access,
    });
  }
  sameToolsAgree(requested, declared);
  await memory.bindSession(where.sessionId, bindings);
}

/**
 * Two bound HTTP resources may declare a tool of one name only with one input schema: the model
 * sees one `memory_<name>` tool and picks the resource with its `memory` argument.
 */
function sameToolsAgree(
  requested: readonly RequestedBinding[],
  declared: ReadonlyMap<string, MemoryDeclaration>,
): void {
  const seen = new Map<string, { resource: string; input: string }>();
  for (const b of requested) {
    const provider = declared.get(b.resource)?.provider;
    if (provider?.kind !== "http") continue;
    for (const tool of provider.tools) {
      const input = canonicalJson(tool.input);
      const first = seen.get(tool.name);
      if (!first) seen.set(tool.name, { resource: b.resource, input });
      else if (first.input !== input) {
        fail(
          `memory.${b.resource}`,
          `${b.resource} and ${first.resource} both declare the tool ${JSON.stringify(tool.name)} with different input schemas; bind one of them, or give the tools one schema`,
        );
      }
    }
  }
}

/** Whether a replayed create asked for the bindings the session has. */
export function sameAsRequested(
  bound: readonly MemoryBindingView[],
  requested: readonly RequestedBinding[],
): boolean {
  const key = (b: { resource: string; scope: string; id?: string | null; access: string }) =>
    JSON.stringify([b.resource, b.scope, b.id ?? null, b.access]);
  return bound.length === requested.length && bound.every((b, i) => key(b) === key(requested[i]!));
}

/** The session's bindings as `GET /sessions/<id>` shows them, `writable` as of now. */
export async function bindingViews(
  memory: MemoryStore | undefined,
  sessionId: string,
  status: SessionStatus,
): Promise<MemoryBindingView[]> {
  if (!memory) return [];
  const bindings = await memory.sessionBindings(sessionId);
  return Promise.all(bindings.map((b) => bindingView(memory, b, status)));
}

async function bindingView(
  memory: MemoryStore,
  b: MemoryBindingRecord,
  status: SessionStatus,
): Promise<MemoryBindingView> {
  let writable = b.access === "read-write" && b.revokedAt === null && status !== "ended";
  if (writable && b.scope === "document") {
    const doc = await memory.getDocument(b, b.id!);
    writable = doc !== undefined && !doc.deleted && doc.agentWrites === "enabled";
  }
  if (b.scope === "collection") writable = false;
  return {
    resource: b.resource,
    scope: b.scope,
    ...(b.id !== null ? { id: b.id } : {}),
    access: b.access,
    writable,
    ...(b.scope === "namespace" ? { partition: partitionKey(b) } : {}),
  };
}

export { MemoryError };
