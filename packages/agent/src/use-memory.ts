// `useMemory` hands a render the memory the runtime recalled for it before the render started,
// and selects that resource's tools for the model step. It never does I/O: a render is
// synchronous, so the runtime reads every bound resource first (docs/memory.md).

import { describeValue } from "./describe-value.ts";
import { RenderError } from "./errors.ts";
import { currentRender } from "./render-context.ts";

/** A document (or provider item) a projection was made from. */
export interface MemorySource {
  readonly id: string;
  readonly title?: string;
  readonly revision?: string;
  readonly updatedAt?: string | null;
}

/** What `useMemory` returns: the recalled text, where it came from, and whether a save could commit. */
export interface MemoryProjection {
  readonly text: string;
  readonly sources: readonly MemorySource[];
  /** At recall time; later freezes, deletion or the session's end can still refuse a save. */
  readonly writable: boolean;
}

/** The memory bound to this session under `memory` (a `defineMemory` result or its id). */
export function useMemory(memory: string | { readonly id: string }): MemoryProjection {
  const state = currentRender();
  const id =
    typeof memory === "string"
      ? memory
      : typeof memory === "object" && memory !== null && typeof memory.id === "string"
        ? memory.id
        : undefined;
  if (id === undefined) {
    throw new RenderError(
      "memory_invalid",
      `useMemory expects a memory resource returned by defineMemory() or its id; got ${describeValue(memory)}`,
    );
  }
  const bound = state.memory?.[id];
  if (bound === undefined) {
    const names = Object.keys(state.memory ?? {});
    throw new RenderError(
      "memory_not_bound",
      `useMemory(${JSON.stringify(id)}): this session has no binding for the memory resource ${JSON.stringify(id)}; bind it when creating the session ({ memory: { ${JSON.stringify(id)}: { scope, id, access } } }). Bound resources: ${names.length > 0 ? names.join(", ") : "none"}`,
      { path: "useMemory", memory: id },
    );
  }
  if (state.memoryUsed && !state.memoryUsed.includes(id)) state.memoryUsed.push(id);
  return bound;
}
