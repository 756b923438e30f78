import { expect, it } from "vitest";
import { KEY, type MemorySuite, refused, withResource } from "./context.ts";

export function documentsSection(c: MemorySuite): void {
  it("registers resources; a limit can change, the provider kind cannot", async () => {
    const memory = c.memory();
    const created = await memory.putResource("proj_a", "development", "notes", {
      kind: "document",
      maxBytes: 100,
    });
    expect(created).toMatchObject({ id: "notes", provider: { kind: "document", maxBytes: 100 } });
    expect(created.documents).toBe(0);
    expect(created.declared).toBe(true);
    const byOwner = await memory.putResource(
      "proj_a",
      "development",
      "owner-first",
      { kind: "document", maxBytes: 100 },
      false,
    );
    expect(byOwner.declared).toBe(false);
    // A later declaration marks it; an owner's registration never unmarks one.
    expect(
      (
        await memory.putResource("proj_a", "development", "owner-first", {
          kind: "document",
          maxBytes: 100,
        })
      ).declared,
    ).toBe(true);
    expect(
      (
        await memory.putResource(
          "proj_a",
          "development",
          "owner-first",
          { kind: "document", maxBytes: 100 },
          false,
        )
      ).declared,
    ).toBe(true);
    await memory.putResource("proj_a", "development", "notes", { kind: "document", maxBytes: 50 });
    expect((await memory.getResource("proj_a", "development", "notes"))?.provider.maxBytes).toBe(
      50,
    );
    await refused(
      memory.putResource("proj_a", "development", "notes", { kind: "http", maxBytes: 50 }),
      "memory_kind_changed",
      "provider.kind",
    );
    expect((await memory.listResources("proj_a", "development")).map((r) => r.id)).toEqual([
      "notes",
      "owner-first",
    ]);
    expect(await memory.listResources("proj_a", "production")).toEqual([]);
  });

  it("creates, reads, replaces, patches and deletes documents with revision checks", async () => {
    const memory = c.memory();
    const key = await withResource(memory);
    const doc = await memory.createDocument(
      key,
      { id: "workshop", title: "Workshop notes", text: "Node 22", summary: "runtime" },
      { kind: "owner" },
    );
    expect(doc).toMatchObject({
      id: "workshop",
      title: "Workshop notes",
      text: "Node 22",
      summary: "runtime",
      agentWrites: "enabled",
      bytes: 7,
      maxBytes: 64,
      writer: { kind: "owner" },
      deleted: false,
    });
    await refused(
      memory.createDocument(key, { id: "workshop", title: "Again" }, { kind: "owner" }),
      "precondition_failed",
      "id",
    );

    const stale = await refused(
      memory.replaceDocument(key, "workshop", { text: "x" }, "999"),
      "precondition_failed",
    );
    expect(stale.details.revision).toBe(doc.revision);
    expect((await memory.getDocument(key, "workshop"))?.text).toBe("Node 22");

    const replaced = await memory.replaceDocument(
      key,
      "workshop",
      { text: "Node 24" },
      doc.revision,
    );
    expect(replaced.revision).not.toBe(doc.revision);
    expect(replaced).toMatchObject({ text: "Node 24", summary: "runtime", bytes: 7 });
    const cleared = await memory.replaceDocument(
      key,
      "workshop",
      { text: "é", summary: "" },
      replaced.revision,
    );
    expect(cleared).toMatchObject({ text: "é", summary: "", bytes: 2 });

    const frozen = await memory.patchDocument(
      key,
      "workshop",
      { agentWrites: "disabled" },
      cleared.revision,
    );
    expect(frozen).toMatchObject({ agentWrites: "disabled", title: "Workshop notes", text: "é" });
    await refused(memory.patchDocument(key, "workshop", {}, frozen.revision), "invalid_request");

    await refused(memory.deleteDocument(key, "workshop", cleared.revision), "precondition_failed");
    await memory.deleteDocument(key, "workshop", frozen.revision);
    const gone = await memory.getDocument(key, "workshop");
    expect(gone).toMatchObject({ deleted: true, title: "", text: "", summary: "" });
    await refused(
      memory.createDocument(key, { id: "workshop", title: "Reuse" }, { kind: "owner" }),
      "precondition_failed",
      "id",
    );
    await refused(
      memory.replaceDocument(key, "workshop", { text: "x" }, gone!.revision),
      "not_found",
    );
    expect(await memory.getDocument(key, "never")).toBeUndefined();
    await refused(
      memory.createDocument(
        { ...KEY, resource: "undeclared" },
        { id: "a", title: "A" },
        {
          kind: "owner",
        },
      ),
      "not_found",
      "resource",
    );
  });

  it("lists live documents newest first, a page at a time, without text", async () => {
    const memory = c.memory();
    const key = await withResource(memory);
    for (const id of ["a", "b", "c", "d", "e"]) {
      await memory.createDocument(
        key,
        { id, title: id.toUpperCase(), text: id },
        { kind: "owner" },
      );
    }
    const d = await memory.getDocument(key, "d");
    await memory.deleteDocument(key, "d", d!.revision);
    const seen: string[] = [];
    let cursor: string | undefined;
    for (let pages = 0; pages < 10; pages++) {
      const page = await memory.listDocuments(key, { limit: 2, ...(cursor ? { cursor } : {}) });
      expect(page.documents.length).toBeLessThanOrEqual(2);
      for (const doc of page.documents) {
        expect(doc.text).toBe("");
        seen.push(doc.id);
      }
      if (page.nextCursor === null) break;
      cursor = page.nextCursor;
    }
    expect([...seen].sort()).toEqual(["a", "b", "c", "e"]);
    const all = await memory.listDocuments(key, { limit: 50 });
    const order = all.documents.map((doc) => [doc.updatedAt, doc.id] as const);
    const sorted = [...order].sort((x, y) =>
      x[0] === y[0] ? (x[1] < y[1] ? -1 : 1) : x[0] > y[0] ? -1 : 1,
    );
    expect(order).toEqual(sorted);
    expect(
      (await memory.getResource(key.projectId, key.environment, key.resource))?.documents,
    ).toBe(4);
    await refused(
      memory.listDocuments(key, { limit: 2, cursor: "not-a-cursor" }),
      "invalid_cursor",
    );
    await refused(memory.listDocuments(key, { limit: 51 }), "invalid_request", "limit");
  });
}
