import { expect, it } from "vitest";
import { binding, type MemorySuite, withResource } from "./context.ts";

export function agentSavesSection(c: MemorySuite): void {
  it("an agent save commits only at the current revision, through a live read-write binding", async () => {
    const memory = c.memory();
    const key = await withResource(memory);
    const doc = await memory.createDocument(key, { id: "workshop", title: "W" }, { kind: "owner" });

    const unbound = await memory.saveByAgent("ses_1", key, "workshop", { text: "x" }, doc.revision);
    expect(unbound).toEqual({ status: "rejected", reason: "session_closed" });

    await memory.bindSession("ses_1", [binding(key)]);
    await memory.bindSession("ses_ro", [binding(key, { access: "read" })]);
    expect(
      await memory.saveByAgent("ses_ro", key, "workshop", { text: "x" }, doc.revision),
    ).toEqual({ status: "rejected", reason: "session_closed" });

    const saved = await memory.saveByAgent(
      "ses_1",
      key,
      "workshop",
      { text: "Node 22", summary: "s" },
      doc.revision,
    );
    expect(saved.status).toBe("saved");
    const after = saved.status === "saved" ? saved.document : undefined;
    expect(after).toMatchObject({ text: "Node 22", summary: "s", bytes: 7 });
    expect(after?.writer).toEqual({ kind: "agent", sessionId: "ses_1" });

    // The same base revision again: someone (here, itself) saved since.
    const again = await memory.saveByAgent(
      "ses_1",
      key,
      "workshop",
      { text: "lost?" },
      doc.revision,
    );
    expect(again.status).toBe("conflict");
    if (again.status === "conflict") {
      expect(again.document).toMatchObject({ text: "Node 22", revision: after?.revision });
    }
    expect((await memory.getDocument(key, "workshop"))?.text).toBe("Node 22");
  });

  it("of concurrent saves from one revision exactly one commits", async () => {
    const memory = c.memory();
    const key = await withResource(memory);
    const doc = await memory.createDocument(key, { id: "workshop", title: "W" }, { kind: "owner" });
    const sessions = Array.from({ length: 8 }, (_, i) => `ses_${i}`);
    for (const id of sessions) await memory.bindSession(id, [binding(key)]);
    const outcomes = await Promise.all(
      sessions.map((id) => memory.saveByAgent(id, key, "workshop", { text: id }, doc.revision)),
    );
    const saved = outcomes.filter((o) => o.status === "saved");
    expect(saved).toHaveLength(1);
    expect(outcomes.filter((o) => o.status === "conflict")).toHaveLength(7);
    const winner = saved[0]!.status === "saved" ? saved[0]!.document : undefined;
    expect((await memory.getDocument(key, "workshop"))?.text).toBe(winner?.text);
  });

  it("refuses saves to frozen, deleted or oversized documents and after revocation", async () => {
    const memory = c.memory();
    const key = await withResource(memory, undefined, 8);
    let doc = await memory.createDocument(key, { id: "workshop", title: "W" }, { kind: "owner" });
    await memory.bindSession("ses_1", [binding(key)]);

    expect(
      await memory.saveByAgent("ses_1", key, "workshop", { text: "123456789" }, doc.revision),
    ).toEqual({ status: "rejected", reason: "too_large", field: "text", bytes: 9, maxBytes: 8 });
    expect(
      await memory.saveByAgent(
        "ses_1",
        key,
        "workshop",
        { text: "ok", summary: "s".repeat(241) },
        doc.revision,
      ),
    ).toEqual({
      status: "rejected",
      reason: "too_large",
      field: "summary",
      bytes: 241,
      maxBytes: 240,
    });

    doc = await memory.patchDocument(key, "workshop", { agentWrites: "disabled" }, doc.revision);
    expect(await memory.saveByAgent("ses_1", key, "workshop", { text: "x" }, doc.revision)).toEqual(
      { status: "rejected", reason: "agent_writes_disabled" },
    );
    // Owner edits continue while frozen.
    doc = await memory.replaceDocument(key, "workshop", { text: "owner" }, doc.revision);
    doc = await memory.patchDocument(key, "workshop", { agentWrites: "enabled" }, doc.revision);
    expect(
      (await memory.saveByAgent("ses_1", key, "workshop", { text: "agent" }, doc.revision)).status,
    ).toBe("saved");

    await memory.revokeSession("ses_1");
    const current = await memory.getDocument(key, "workshop");
    expect(
      await memory.saveByAgent("ses_1", key, "workshop", { text: "late" }, current!.revision),
    ).toEqual({ status: "rejected", reason: "session_closed" });
    expect((await memory.sessionBindings("ses_1"))[0]?.revokedAt).not.toBeNull();

    await memory.bindSession("ses_2", [binding(key)]);
    await memory.deleteDocument(key, "workshop", current!.revision);
    const deleted = await memory.getDocument(key, "workshop");
    expect(
      await memory.saveByAgent("ses_2", key, "workshop", { text: "x" }, deleted!.revision),
    ).toEqual({ status: "rejected", reason: "not_found" });
  });
}
