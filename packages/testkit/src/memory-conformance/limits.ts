import { MEMORY_LIMITS } from "@opencomputer/agent/internal";
import { expect, it } from "vitest";
import { KEY, type MemorySuite, refused, withResource } from "./context.ts";

export function limitsSection(c: MemorySuite): void {
  it("refuses every field over its limit, naming it, and writes nothing", async () => {
    const memory = c.memory();
    const key = await withResource(memory, KEY, 16);
    const owner = { kind: "owner" } as const;
    await refused(
      memory.createDocument(key, { id: "a", title: "A", text: "x".repeat(17) }, owner),
      "memory_limit_exceeded",
      "text",
    );
    await refused(
      memory.createDocument(key, { id: "a", title: "é".repeat(121) }, owner),
      "memory_limit_exceeded",
      "title",
    );
    await refused(
      memory.createDocument(key, { id: "a", title: "A", summary: "s".repeat(241) }, owner),
      "memory_limit_exceeded",
      "summary",
    );
    await refused(
      memory.createDocument(key, { id: "a", title: "" }, owner),
      "invalid_request",
      "title",
    );
    await refused(
      memory.createDocument(key, { id: "x".repeat(129), title: "A" }, owner),
      "invalid_request",
      "id",
    );
    await refused(
      memory.createDocument(key, { id: "a", title: "A", agentWrites: "maybe" as never }, owner),
      "invalid_request",
      "agentWrites",
    );
    await refused(
      memory.createDocument(key, { id: "a", title: 42 as never }, owner),
      "invalid_request",
      "title",
    );
    expect(await memory.getDocument(key, "a")).toBeUndefined();
    const doc = await memory.createDocument(
      key,
      { id: "a", title: "A", text: "x".repeat(16) },
      owner,
    );
    await refused(
      memory.replaceDocument(key, "a", { text: "y".repeat(17) }, doc.revision),
      "memory_limit_exceeded",
      "text",
    );
    expect((await memory.getDocument(key, "a"))?.text).toBe("x".repeat(16));
    await refused(
      memory.putResource("proj_a", "development", "notes", { kind: "document", maxBytes: 16_385 }),
      "invalid_request",
      "provider.maxBytes",
    );
  });

  it("lowering a limit keeps oversized documents readable; their next replacement must fit", async () => {
    const memory = c.memory();
    const key = await withResource(memory, KEY, 16);
    const doc = await memory.createDocument(
      key,
      { id: "a", title: "A", text: "x".repeat(16) },
      { kind: "owner" },
    );
    await withResource(memory, KEY, 4);
    const read = await memory.getDocument(key, "a");
    expect(read).toMatchObject({ text: "x".repeat(16), maxBytes: 4 });
    await refused(
      memory.replaceDocument(key, "a", { text: "12345" }, doc.revision),
      "memory_limit_exceeded",
    );
    await memory.replaceDocument(key, "a", { text: "1234" }, doc.revision);
  });

  it("bounds the resources of a project environment", async () => {
    const memory = c.memory();
    for (let i = 0; i < MEMORY_LIMITS.resourcesPerEnvironment; i++) {
      await memory.putResource("proj_a", "development", `r${i}`, { kind: "document", maxBytes: 8 });
    }
    await refused(
      memory.putResource("proj_a", "development", "one-more", { kind: "document", maxBytes: 8 }),
      "memory_limit_exceeded",
      "resource",
    );
    // Another environment has its own count.
    await memory.putResource("proj_a", "production", "one-more", { kind: "document", maxBytes: 8 });
  });
}
