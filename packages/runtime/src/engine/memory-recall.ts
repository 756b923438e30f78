// Before every render the engine reads each memory resource the session binds and hands the
// projections to the render (`useMemory` returns them). The revision read here is the one the
// step's saves are checked against ("the host supplies the revision from the originating
// render"), so a save after another writer's edit conflicts instead of overwriting it.

import type { MemoryProjection } from "@opencomputer/agent";
import type { MemoryDeclaration } from "@opencomputer/agent/internal";
import { utf8Bytes } from "@opencomputer/agent/internal";
import type { RenderedAgent } from "../ports/agent-execution.ts";
import { MEMORY_LIMITS } from "../ports/memory-rules.ts";
import type {
  MemoryBindingRecord,
  MemoryDocumentRecord,
  MemoryStore,
} from "../ports/memory-store.ts";
import { type HttpMemoryDeclaration, MemoryProviderError } from "./memory-http.ts";
import { recallNamespace } from "./memory-http-recall.ts";
import type { TurnScope } from "./turn-scope.ts";

/** What one render was given: the projections, and per resource its binding and revision. */
export interface Recalled {
  projections: Record<string, MemoryProjection>;
  bound: Map<string, RecalledBinding>;
}

export interface RecalledBinding {
  binding: MemoryBindingRecord;
  declaration: MemoryDeclaration | undefined;
  /** Scope `document`: the revision the render saw. */
  revision?: string;
  /** Scope `namespace`: the provider's read state from the recall, for this render's tools. */
  cursor?: string;
}

/** The session's bindings and the deployment's declarations, read once per turn. */
export interface TurnMemory {
  bindings: MemoryBindingRecord[];
  declarations: Map<string, MemoryDeclaration>;
  /**
   * Per document (`resource/id`), the revision of the last conflict answer the model was shown
   * this turn, until a save succeeds. The model reconciles with that answer's text, which can be
   * older than the next render's: a save is then checked against it, so it conflicts again
   * rather than overwrite what was saved in between.
   */
  conflicts?: Map<string, string>;
}

const byRender = new WeakMap<RenderedAgent, Recalled>();

export function rememberRecall(render: RenderedAgent, recalled: Recalled | undefined): void {
  if (recalled) byRender.set(render, recalled);
}

export function recallOf(render: RenderedAgent): Recalled | undefined {
  return byRender.get(render);
}

async function turnMemory(scope: TurnScope, memory: MemoryStore): Promise<TurnMemory> {
  if (!scope.memory) {
    const bindings = await memory.sessionBindings(scope.sessionId);
    const declarations = new Map<string, MemoryDeclaration>();
    if (bindings.length > 0) {
      const declared = await scope.ctx.agents.memory?.(scope.agentId, scope.deploymentId);
      for (const d of declared ?? []) declarations.set(d.id, d);
    }
    scope.memory = { bindings, declarations };
  }
  return scope.memory;
}

/**
 * The memory for the next render: undefined when the session binds none, a message when a
 * bound resource cannot be read (which blocks the step: a render never runs on partial memory).
 */
export async function recallMemory(scope: TurnScope): Promise<Recalled | undefined | string> {
  const memory = scope.ctx.memory;
  if (!memory) return undefined;
  const { bindings, declarations } = await turnMemory(scope, memory);
  if (bindings.length === 0) return undefined;
  const recalled: Recalled = { projections: {}, bound: new Map() };
  for (const binding of bindings) {
    const declaration = declarations.get(binding.resource);
    const entry: RecalledBinding = { binding, declaration };
    if (binding.scope === "document") {
      const doc = await memory.getDocument(binding, binding.id!);
      if (!doc || doc.deleted) {
        return `Memory ${binding.resource}/${binding.id} could not be recalled: the document was deleted`;
      }
      entry.revision = doc.revision;
      recalled.projections[binding.resource] = {
        text: doc.text,
        sources: [sourceOf(doc)],
        writable:
          binding.access === "read-write" &&
          binding.revokedAt === null &&
          doc.agentWrites === "enabled",
      };
    } else if (binding.scope === "collection") {
      recalled.projections[binding.resource] = await overview(memory, binding);
    } else {
      if (declaration?.provider.kind !== "http") {
        return `Memory ${binding.resource}: the deployment no longer declares it as HTTP memory`;
      }
      try {
        const got = await recallNamespace(scope, binding, declaration as HttpMemoryDeclaration);
        recalled.projections[binding.resource] = got.projection;
        if (got.cursor !== undefined) entry.cursor = got.cursor;
      } catch (error) {
        // An aborted turn is not a failed recall: the abort's owner settles the turn.
        if (!(error instanceof MemoryProviderError) || scope.signal.aborted) throw error;
        return `Memory ${binding.resource}/${binding.id} could not be recalled: ${error.code}: ${error.message}`;
      }
    }
    recalled.bound.set(binding.resource, entry);
  }
  return recalled;
}

function sourceOf(doc: MemoryDocumentRecord) {
  return { id: doc.id, title: doc.title, revision: doc.revision, updatedAt: doc.updatedAt };
}

/** Recent entries, `id | title | summary | date`, whole lines only, within the overview limits. */
async function overview(memory: MemoryStore, binding: MemoryBindingRecord) {
  const page = await memory.listDocuments(binding, { limit: MEMORY_LIMITS.overviewEntries });
  const lines: string[] = [];
  const sources = [];
  let bytes = 0;
  for (const doc of page.documents) {
    const line = [doc.id, doc.title, doc.summary, doc.updatedAt.slice(0, 10)]
      .map((field) => field.replace(/[\r\n|]+/g, " "))
      .join(" | ");
    const size = utf8Bytes(line) + (lines.length > 0 ? 1 : 0);
    if (bytes + size > MEMORY_LIMITS.overviewBytes) break;
    bytes += size;
    lines.push(line);
    sources.push(sourceOf(doc));
  }
  return { text: lines.join("\n"), sources, writable: false };
}
