// A conflict answer can be older than the next render. The model is told "here is the current
// text, reconcile and save again", and another writer may save before its next step renders. A
// save built on that answer's text must then conflict again, not pass the newer render's
// revision check and overwrite what was saved in between (a lost update).

import { fileURLToPath } from "node:url";
import type { LanguageModelV3 } from "@ai-sdk/provider";
import { type MemoryStore, WHOLE_STEPS, type WholeStepsModel } from "@opencomputer/runtime";
import { createSqliteMemoryStore } from "@opencomputer/store-sqlite";
import { afterEach, expect, it } from "vitest";
import { notes } from "./fixtures/memory-agents.ts";
import { type Harness, harness, ofType } from "./harness.ts";

const AGENTS = fileURLToPath(new URL("./fixtures/memory-agents.ts", import.meta.url));
const KEY = { projectId: "default", environment: "development", resource: "notes" };
const BIND_RW = { notes: { scope: "document", id: "workshop", access: "read-write" } };

type CallOptions = Parameters<WholeStepsModel["doGenerate"]>[0];
type Content = Awaited<ReturnType<WholeStepsModel["doGenerate"]>>["content"][number];

let h: Harness;
afterEach(async () => {
  await h?.close();
});

/** Saves twice at first (one conflicts), then always rebuilds on the latest conflict's text. */
function reconciler(): LanguageModelV3 {
  let step = 0;
  const save = (text: string) => ({
    type: "tool-call" as const,
    toolCallId: `c${step}-${text.length}`,
    toolName: "memory_save",
    input: JSON.stringify({ text }),
  });
  const doGenerate = async (options: CallOptions) => {
    step++;
    const last = options.prompt[options.prompt.length - 1]!;
    let content: Content[];
    if (step === 1) content = [save("A"), save("B")];
    else {
      const outputs = last.role === "tool" ? last.content : [];
      const conflict = outputs
        .map((p) => p as unknown as { output: { value: { status: string; text?: string } } })
        .map((p) => p.output.value)
        .find((o) => o.status === "conflict");
      content = conflict ? [save(`${conflict.text} +mine`)] : [{ type: "text", text: "done" }];
    }
    return {
      content,
      finishReason: { unified: "stop" as const, raw: undefined },
      usage: {
        inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
        outputTokens: { total: 1, text: 1, reasoning: 0 },
      },
      warnings: [],
    };
  };
  return {
    specificationVersion: "v3",
    provider: "fake",
    modelId: "reconciler",
    supportedUrls: {},
    [WHOLE_STEPS]: true,
    doGenerate,
    doStream: () => {
      throw new Error("whole steps only");
    },
  } as unknown as LanguageModelV3;
}

it("a save rebuilt on a conflict answer conflicts again when the document moved on since", async () => {
  // The runtime's memory store, with another writer who saves right after the first conflict:
  // between that answer and the model's next step (whose render sees the newer revision).
  let inner: MemoryStore | undefined;
  let interfered = false;
  const memory = new Proxy({} as MemoryStore, {
    get(_, name: keyof MemoryStore) {
      const store = inner!;
      if (name !== "saveByAgent") return (store[name] as (...a: unknown[]) => unknown).bind(store);
      return async (...args: Parameters<MemoryStore["saveByAgent"]>) => {
        const outcome = await store.saveByAgent(...args);
        if (outcome.status === "conflict" && !interfered) {
          interfered = true;
          const doc = await store.getDocument(KEY, "workshop");
          await store.replaceDocument(KEY, "workshop", { text: "OWNER" }, doc!.revision);
        }
        return outcome;
      };
    },
  });
  h = await harness({
    agentsModule: AGENTS,
    agentMemory: { workshop: [notes] },
    providers: { fake: () => reconciler() },
    model: "fake/reconciler",
    memory,
  });
  inner = createSqliteMemoryStore(h.store);
  await inner.putResource("default", "development", "notes", { kind: "document", maxBytes: 64 });
  await inner.createDocument(KEY, { id: "workshop", title: "W" }, { kind: "owner" });

  const { session } = await h.runtime.sessions.create({ agentId: "workshop", memory: BIND_RW });
  const { turnId } = await h.runtime.sessions.sendTurn(session.id, { text: "save" });
  const turn = await h.runtime.sessions.waitForTurn(session.id, turnId, { timeoutMs: 20_000 });
  expect([turn.status, turn.error]).toEqual(["completed", null]);
  expect(interfered).toBe(true);

  const statuses = ofType(await h.events(session.id), "tool.completed").map(
    (e) => (e.data.output as { status: string }).status,
  );
  // Step 1: one saved, one conflict (told the text of the first save). The owner then saves.
  // Step 2: the save built on the told text conflicts (its render was newer). Step 3: saved.
  expect(statuses.slice(2)).toEqual(["conflict", "saved"]);
  const doc = await inner.getDocument(KEY, "workshop");
  expect(doc!.text).toBe("OWNER +mine");
});
