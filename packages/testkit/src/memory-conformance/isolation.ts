import { expect, it } from "vitest";
import { binding, KEY, type MemorySuite, withResource } from "./context.ts";

export function isolationSection(c: MemorySuite): void {
  it("keeps projects and environments apart, ids and bindings included", async () => {
    const memory = c.memory();
    const a = await withResource(memory, KEY);
    const b = await withResource(memory, { ...KEY, projectId: "proj_b" });
    const prod = await withResource(memory, { ...KEY, environment: "production" });
    const docA = await memory.createDocument(
      a,
      { id: "workshop", title: "A", text: "secret of A" },
      { kind: "owner" },
    );
    expect(await memory.getDocument(b, "workshop")).toBeUndefined();
    expect(await memory.getDocument(prod, "workshop")).toBeUndefined();
    expect((await memory.listDocuments(b, { limit: 50 })).documents).toEqual([]);
    expect((await memory.listResources("proj_b", "development"))[0]?.documents).toBe(0);

    // The same id in B is a document of its own.
    const docB = await memory.createDocument(b, { id: "workshop", title: "B" }, { kind: "owner" });
    expect(docB.text).toBe("");

    // A binding of project A does not let a save reach B's document of the same name.
    await memory.bindSession("ses_a", [binding(a)]);
    expect(
      await memory.saveByAgent("ses_a", b, "workshop", { text: "crossed" }, docB.revision),
    ).toEqual({ status: "rejected", reason: "session_closed" });
    expect((await memory.getDocument(b, "workshop"))?.text).toBe("");
    expect((await memory.getDocument(a, "workshop"))?.text).toBe(docA.text);
  });
}
