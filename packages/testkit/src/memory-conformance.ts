// The MemoryStore contract as tests: every implementation runs `memoryConformance` from its own
// test file, each test on a fresh, empty store. Refusals are checked by their MemoryError code
// and path, and by reading back that nothing changed.

import type { MemoryStore } from "@opencomputer/runtime";
import { afterEach, beforeEach, describe } from "vitest";
import { agentSavesSection } from "./memory-conformance/agent-saves.ts";
import { bindingsSection } from "./memory-conformance/bindings.ts";
import type { MemorySuite } from "./memory-conformance/context.ts";
import { documentsSection } from "./memory-conformance/documents.ts";
import { isolationSection } from "./memory-conformance/isolation.ts";
import { limitsSection } from "./memory-conformance/limits.ts";

export interface MemoryStoreFixture {
  memory: MemoryStore;
  /** Runs after each test: closes and removes whatever the store left behind. */
  cleanup(): Promise<void>;
}

export function memoryConformance(
  name: string,
  makeStore: () => Promise<MemoryStoreFixture>,
): void {
  describe(`MemoryStore conformance: ${name}`, () => {
    let fixture: MemoryStoreFixture;
    beforeEach(async () => {
      fixture = await makeStore();
    });
    afterEach(async () => {
      await fixture.cleanup();
    });
    const c: MemorySuite = { memory: () => fixture.memory };
    documentsSection(c);
    agentSavesSection(c);
    bindingsSection(c);
    limitsSection(c);
    isolationSection(c);
  });
}
