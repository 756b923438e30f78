import { expect, it } from "vitest";
import { binding, KEY, type MemorySuite, refused } from "./context.ts";

export function bindingsSection(c: MemorySuite): void {
  it("keeps a session's bindings in order; binding again must agree", async () => {
    const memory = c.memory();
    const bindings = [
      binding(KEY),
      binding({ ...KEY, resource: "library" }, { scope: "collection", id: null, access: "read" }),
      binding({ ...KEY, resource: "knowledge" }, { scope: "namespace", id: "owner" }),
    ];
    await memory.bindSession("ses_1", bindings);
    const read = await memory.sessionBindings("ses_1");
    expect(read.map((b) => [b.resource, b.scope, b.id, b.access, b.revokedAt])).toEqual([
      ["notes", "document", "workshop", "read-write", null],
      ["library", "collection", null, "read", null],
      ["knowledge", "namespace", "owner", "read-write", null],
    ]);
    await memory.bindSession("ses_1", bindings);
    await refused(memory.bindSession("ses_1", [binding(KEY, { id: "other" })]), "conflict");
    expect(await memory.sessionBindings("ses_1")).toHaveLength(3);
    expect(await memory.sessionBindings("ses_none")).toEqual([]);
  });

  it("refuses malformed bindings and more than eight", async () => {
    const memory = c.memory();
    const nine = Array.from({ length: 9 }, (_, i) => binding({ ...KEY, resource: `r${i}` }));
    await refused(memory.bindSession("ses_1", nine), "memory_limit_exceeded", "memory");
    await refused(
      memory.bindSession("ses_1", [binding(KEY, { scope: "collection" })]),
      "invalid_request",
      "memory.notes.id",
    );
    await refused(
      memory.bindSession("ses_1", [binding(KEY, { id: "no spaces" })]),
      "invalid_request",
      "memory.notes.id",
    );
    await refused(
      memory.bindSession("ses_1", [binding({ ...KEY, resource: "Bad_Id" })]),
      "invalid_request",
      "resource",
    );
    await refused(memory.bindSession("ses_1", [binding(KEY), binding(KEY)]), "invalid_request");
    expect(await memory.sessionBindings("ses_1")).toEqual([]);
  });
}
