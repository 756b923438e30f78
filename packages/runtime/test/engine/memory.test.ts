// Memory in the engine, in both execution modes: the docs' workshop-notes sample (bind, save,
// recall in a later session), conflicts from one render's revision, frozen documents, read-only
// and collection bindings, an unbound useMemory, admission of bad bindings, and revocation on end.

import { fileURLToPath } from "node:url";
import type { MemoryStore } from "@opencomputer/runtime";
import { createSqliteMemoryStore } from "@opencomputer/store-sqlite";
import { afterEach, describe, expect, it } from "vitest";
import { library, notes } from "./fixtures/memory-agents.ts";
import {
  EXECUTIONS,
  type Harness,
  type HarnessOptions,
  harness,
  ofType,
  TEST_WORKERS,
} from "./harness.ts";

const AGENTS = fileURLToPath(new URL("./fixtures/memory-agents.ts", import.meta.url));
const KEY = { projectId: "default", environment: "development", resource: "notes" };
const BIND_RW = { notes: { scope: "document", id: "workshop", access: "read-write" } };

let h: Harness;
afterEach(async () => {
  await h?.close();
});

describe.each(EXECUTIONS)("memory (%s)", (execution) => {
  let memory: MemoryStore;
  const start = async (options: HarnessOptions) => {
    h = await harness({
      agentsModule: AGENTS,
      execution,
      workers: TEST_WORKERS,
      agentMemory: { workshop: [notes], librarian: [library], forgetful: [] },
      ...options,
    });
    memory = createSqliteMemoryStore(h.store);
    await memory.putResource("default", "development", "notes", { kind: "document", maxBytes: 64 });
    await memory.putResource("default", "development", "library", {
      kind: "document",
      maxBytes: 8192,
    });
    return h;
  };
  const turn = async (agentId: string, text: string, bindings: unknown) => {
    const { session } = await h.runtime.sessions.create({ agentId, memory: bindings });
    const { turnId } = await h.runtime.sessions.sendTurn(session.id, { text });
    const settled = await h.runtime.sessions.waitForTurn(session.id, turnId, { timeoutMs: 20_000 });
    return { sessionId: session.id, turn: settled, events: await h.events(session.id) };
  };

  it("saves a note through memory_save and a later session recalls it (the docs' sample)", async () => {
    await start({
      steps: [
        {
          toolCalls: [
            {
              name: "memory_save",
              input: { text: "Node 22; no paid services", summary: "runtime" },
            },
          ],
        },
        { text: "Noted." },
      ],
    });
    await memory.createDocument(
      KEY,
      { id: "workshop", title: "Workshop notes" },
      { kind: "owner" },
    );
    const first = await turn("workshop", "Remember: Node 22, no paid services", BIND_RW);
    expect(first.turn.error).toBeNull();
    expect(first.turn.status).toBe("completed");
    const rendered = ofType(first.events, "agent.rendered")[0]!;
    expect(rendered.data.enabledTools).toEqual(["memory_save"]);
    expect(rendered.data.instructions).toContain('Saved notes (JSON string): ""');
    const saved = ofType(first.events, "memory.saved");
    const doc = await memory.getDocument(KEY, "workshop");
    expect(saved.map((e) => e.data)).toEqual([
      { resource: "notes", documentId: "workshop", revision: doc!.revision, bytes: 25 },
    ]);
    expect(doc).toMatchObject({
      text: "Node 22; no paid services",
      summary: "runtime",
      writer: { kind: "agent", sessionId: first.sessionId },
    });
    const completed = ofType(first.events, "tool.completed")[0]!;
    expect(completed.data.output).toEqual({ status: "saved", revision: doc!.revision, bytes: 25 });
    // memory.saved follows the call's tool.completed in the same write.
    expect(saved[0]!.seq).toBe(completed.seq + 1);

    h.script("test", [{ text: "It must run on Node 22." }]);
    const second = await turn("workshop", "What are the constraints?", BIND_RW);
    const recalled = ofType(second.events, "agent.rendered")[0]!;
    expect(recalled.data.instructions).toContain("Node 22; no paid services");
    expect(recalled.data.instructions).toContain(`revision ${doc!.revision}`);

    const view = await h.runtime.sessions.get(second.sessionId);
    expect(view.memory).toEqual([
      {
        resource: "notes",
        scope: "document",
        id: "workshop",
        access: "read-write",
        writable: true,
      },
    ]);
    await h.runtime.sessions.end(second.sessionId);
    expect((await h.runtime.sessions.get(second.sessionId)).memory[0]?.writable).toBe(false);
  });

  it("a second save from the same render conflicts and carries the current text and revision", async () => {
    await start({
      steps: [
        {
          toolCalls: [
            { name: "memory_save", input: { text: "first" } },
            { name: "memory_save", input: { text: "second" } },
          ],
        },
        { text: "done" },
      ],
    });
    await memory.createDocument(KEY, { id: "workshop", title: "W" }, { kind: "owner" });
    const run = await turn("workshop", "save twice", BIND_RW);
    const outputs = ofType(run.events, "tool.completed").map(
      (e) => e.data.output as Record<string, unknown>,
    );
    expect(outputs.map((o) => o.status).sort()).toEqual(["conflict", "saved"]);
    const doc = await memory.getDocument(KEY, "workshop");
    const conflict = outputs.find((o) => o.status === "conflict")!;
    expect(conflict).toMatchObject({ text: doc!.text, revision: doc!.revision, summary: "" });
    expect(ofType(run.events, "memory.saved")).toHaveLength(1);
  });

  it("a frozen document refuses the save with a reason the model can read; nothing changes", async () => {
    await start({
      steps: [
        { toolCalls: [{ name: "memory_save", input: { text: "overwrite" } }] },
        { text: "ok" },
      ],
    });
    const doc = await memory.createDocument(
      KEY,
      { id: "workshop", title: "W", text: "keep", agentWrites: "disabled" },
      { kind: "owner" },
    );
    const run = await turn("workshop", "save", BIND_RW);
    expect(ofType(run.events, "agent.rendered")[0]!.data.instructions).toContain("Writable: false");
    const output = ofType(run.events, "tool.completed")[0]!.data.output as Record<string, unknown>;
    expect(output).toMatchObject({ status: "rejected", reason: "agent_writes_disabled" });
    expect(String(output.message)).toMatch(/frozen/);
    expect(ofType(run.events, "memory.saved")).toEqual([]);
    expect(await memory.getDocument(KEY, "workshop")).toEqual(doc);
  });

  it("malformed saves are tool errors; an oversized one is a result naming the field and limit", async () => {
    await start({
      steps: [
        {
          toolCalls: [
            { name: "memory_save", input: { text: 5 } },
            { name: "memory_save", input: { text: "x", colour: "red" } },
            { name: "memory_save", input: { memory: "elsewhere", text: "x" } },
            { name: "memory_save", input: { text: "y".repeat(65) } },
          ],
        },
        { text: "ok" },
      ],
    });
    const doc = await memory.createDocument(KEY, { id: "workshop", title: "W" }, { kind: "owner" });
    const run = await turn("workshop", "save badly", BIND_RW);
    const failed = ofType(run.events, "tool.failed").map((e) => String(e.data.message));
    expect(failed).toHaveLength(2);
    expect(failed.some((m) => /"text"|text/.test(m))).toBe(true);
    expect(failed.some((m) => /colour/.test(m))).toBe(true);
    const outputs = ofType(run.events, "tool.completed").map((e) => e.data.output);
    expect(outputs).toContainEqual({ status: "rejected", reason: "not_bound", bound: ["notes"] });
    expect(outputs).toContainEqual(
      expect.objectContaining({
        status: "rejected",
        reason: "too_large",
        field: "text",
        bytes: 65,
        maxBytes: 64,
      }),
    );
    expect(await memory.getDocument(KEY, "workshop")).toEqual(doc);
  });

  it("a read binding gets the text without memory_save; a call to it fails as unknown", async () => {
    await start({
      steps: [{ toolCalls: [{ name: "memory_save", input: { text: "x" } }] }, { text: "ok" }],
    });
    await memory.createDocument(
      KEY,
      { id: "workshop", title: "W", text: "hello" },
      { kind: "owner" },
    );
    const run = await turn("workshop", "save", { notes: { scope: "document", id: "workshop" } });
    const rendered = ofType(run.events, "agent.rendered")[0]!;
    expect(rendered.data.enabledTools).toEqual([]);
    expect(rendered.data.instructions).toContain('"hello"');
    expect(ofType(run.events, "tool.failed")).toHaveLength(1);
    expect((await memory.getDocument(KEY, "workshop"))?.text).toBe("hello");
  });

  it("a collection binding shows an overview and offers memory_list and memory_read", async () => {
    await start({
      steps: [
        {
          toolCalls: [
            { name: "memory_list", input: {} },
            { name: "memory_read", input: { id: "b" } },
            { name: "memory_read", input: { id: "missing" } },
            { name: "memory_list", input: { cursor: "bogus" } },
          ],
        },
        { text: "ok" },
      ],
    });
    const lib = { ...KEY, resource: "library" };
    await memory.createDocument(
      lib,
      { id: "a", title: "Alpha", summary: "first" },
      { kind: "owner" },
    );
    await memory.createDocument(lib, { id: "b", title: "Beta", text: "full b" }, { kind: "owner" });
    const run = await turn("librarian", "look", { library: { scope: "collection" } });
    const rendered = ofType(run.events, "agent.rendered")[0]!;
    expect(rendered.data.enabledTools).toEqual(["memory_read", "memory_list"]);
    expect(rendered.data.instructions).toMatch(/a \| Alpha \| first \| \d{4}-\d\d-\d\d/);
    const outputs = ofType(run.events, "tool.completed").map(
      (e) => e.data.output as Record<string, unknown>,
    );
    const listed = outputs.find((o) => Array.isArray(o.documents))!;
    expect((listed.documents as Array<{ id: string }>).map((d) => d.id).sort()).toEqual(["a", "b"]);
    expect(listed.nextCursor).toBeNull();
    expect(outputs).toContainEqual(expect.objectContaining({ id: "b", text: "full b" }));
    expect(outputs).toContainEqual({ status: "rejected", reason: "not_found" });
    expect(outputs).toContainEqual({ status: "rejected", reason: "invalid_cursor" });
  });

  it("useMemory of a resource the session does not bind fails the turn before the model runs", async () => {
    await start({ steps: [{ text: "never" }] });
    const run = await turn("forgetful", "hi", undefined);
    expect(run.turn.status).toBe("failed");
    expect(run.turn.error?.message).toMatch(/no binding for the memory resource "notes"/);
    expect(ofType(run.events, "usage.recorded")).toEqual([]);
  });
});

describe("memory admission", () => {
  it("refuses bad bindings with typed errors, naming the field, and creates no session", async () => {
    h = await harness({
      agentsModule: AGENTS,
      agentMemory: { workshop: [notes] },
      steps: [],
    });
    const memory = createSqliteMemoryStore(h.store);
    await memory.putResource("default", "development", "notes", { kind: "document", maxBytes: 64 });
    await memory.createDocument(KEY, { id: "workshop", title: "W" }, { kind: "owner" });
    const refusal = (bindings: unknown, options: Record<string, unknown> = {}) =>
      h.runtime.sessions.create({ agentId: "workshop", memory: bindings, ...options }).then(
        () => undefined,
        (e: { code: string; details: { path?: string } }) => [e.code, e.details.path],
      );
    expect(await refusal({ library: { scope: "collection" } })).toEqual([
      "invalid_input",
      "memory.library",
    ]);
    expect(await refusal({ notes: { scope: "document", id: "nope" } })).toEqual([
      "invalid_input",
      "memory.notes.id",
    ]);
    expect(await refusal({ notes: { scope: "folder", id: "workshop" } })).toEqual([
      "invalid_input",
      "memory.notes.scope",
    ]);
    expect(await refusal({ notes: { scope: "collection", access: "read-write" } })).toEqual([
      "invalid_input",
      "memory.notes.access",
    ]);
    expect(await refusal({ notes: { scope: "namespace", id: "owner" } })).toEqual([
      "invalid_input",
      "memory.notes.scope",
    ]);
    expect(await refusal({ notes: { scope: "document", id: "workshop", extra: 1 } })).toEqual([
      "invalid_input",
      "memory.notes.extra",
    ]);
    expect(
      await refusal(Object.fromEntries(Array.from({ length: 9 }, (_, i) => [`r${i}`, {}]))),
    ).toEqual(["invalid_input", "memory"]);
    // Another project has no such document: its sessions cannot bind project default's notes.
    expect(
      await refusal({ notes: { scope: "document", id: "workshop" } }, { projectId: "other" }),
    ).toEqual(["invalid_input", "memory.notes.id"]);
    expect((await h.runtime.sessions.list()).sessions).toEqual([]);
  });
});
