// The owner's memory API over HTTP: the docs' flow (create a document, bind a session to it,
// the agent saves, the owner reads), conditional writes with ETags, freezing, deletion, typed
// errors for bad input, and projects that cannot see each other's memory.
import { defineMemory, documentMemory, useMemory, useModel } from "@opencomputer/agent";
import { afterEach, describe, expect, it } from "vitest";
import type { Auth } from "../src/index.ts";
import { KEY, type Loose, startServer, type TestServer } from "./helpers.ts";

const notes = defineMemory({
  id: "notes",
  description: "Workshop requirements.",
  provider: documentMemory({ maxBytes: 100 }),
});
function workshop() {
  const saved = useMemory(notes);
  useModel("script/test");
  return `Notes: ${JSON.stringify(saved.text)}`;
}
const B = "key-of-team-b";
const twoProjects: Auth = {
  async verify(key) {
    if (key === KEY) return { projectId: "default" };
    if (key === B) return { projectId: "team-b" };
    return null;
  },
};
const DOCS = "/projects/default/memory/notes/documents";
const DEV = "?environment=development";

let s: TestServer;
afterEach(async () => s?.close());

async function start() {
  s = await startServer({
    agents: { workshop },
    memory: { workshop: [notes] },
    steps: [{ toolCalls: [{ name: "memory_save", input: { text: "Node 22" } }] }, { text: "ok" }],
    handler: { auth: twoProjects },
  });
}

describe("memory routes", () => {
  it("create, bind a session, the agent saves, the owner reads, freezes and deletes", async () => {
    await start();
    const create = await s.call("PUT", `${DOCS}/workshop${DEV}`, {
      body: { title: "Workshop notes" },
      headers: { "if-none-match": "*" },
    });
    expect(create.status).toBe(201);
    const doc: Loose = await create.json();
    expect(create.headers.get("etag")).toBe(`"${doc.revision}"`);
    expect(doc).toMatchObject({
      id: "workshop",
      text: "",
      agentWrites: "enabled",
      writer: { kind: "owner" },
    });
    const again = await s.call("PUT", `${DOCS}/workshop${DEV}`, {
      body: { title: "x" },
      headers: { "if-none-match": "*" },
    });
    expect(again.status).toBe(412);

    const session = await s.call("POST", "/sessions", {
      body: {
        agentId: "workshop",
        memory: { notes: { scope: "document", id: "workshop", access: "read-write" } },
      },
      headers: { "idempotency-key": "workshop-1" },
    });
    expect(session.status).toBe(201);
    const id = ((await session.json()) as Loose).session.id as string;
    const view: Loose = await (await s.call("GET", `/sessions/${id}`)).json();
    expect(view.memory).toEqual([
      {
        resource: "notes",
        scope: "document",
        id: "workshop",
        access: "read-write",
        writable: true,
      },
    ]);
    // Same key, other bindings: a conflict, not the first session.
    const replay = await s.call("POST", "/sessions", {
      body: { agentId: "workshop", memory: { notes: { scope: "document", id: "workshop" } } },
      headers: { "idempotency-key": "workshop-1" },
    });
    expect(replay.status).toBe(409);

    const turn: Loose = await (
      await s.call("POST", `/sessions/${id}/turns`, { body: { input: { text: "remember" } } })
    ).json();
    await s.runtime.sessions.waitForTurn(id, turn.turnId);
    const events: Loose = await (await s.call("GET", `/sessions/${id}/events?after=0`)).json();
    const saved = events.events.find((e: Loose) => e.type === "memory.saved");
    const read = await s.call("GET", `${DOCS}/workshop${DEV}`);
    const current: Loose = await read.json();
    expect(current).toMatchObject({ text: "Node 22", writer: { kind: "agent", sessionId: id } });
    expect(saved.data).toEqual({
      resource: "notes",
      documentId: "workshop",
      revision: current.revision,
      bytes: 7,
    });

    const stale = await s.call("PATCH", `${DOCS}/workshop${DEV}`, {
      body: { agentWrites: "disabled" },
      headers: { "if-match": `"${doc.revision}"` },
    });
    expect(stale.status).toBe(412);
    expect(((await stale.json()) as Loose).error.code).toBe("precondition_failed");
    const frozen = await s.call("PATCH", `${DOCS}/workshop${DEV}`, {
      body: { agentWrites: "disabled" },
      headers: { "if-match": read.headers.get("etag")! },
    });
    expect(((await frozen.json()) as Loose).agentWrites).toBe("disabled");
    expect(
      ((await (await s.call("GET", `/sessions/${id}`)).json()) as Loose).memory[0].writable,
    ).toBe(false);

    const inventory: Loose = await (await s.call("GET", `/projects/default/memory${DEV}`)).json();
    expect(inventory.resources).toEqual([
      { id: "notes", provider: { kind: "document", maxBytes: 100 }, declared: true, documents: 1 },
    ]);
    const list: Loose = await (await s.call("GET", `${DOCS}${DEV}`)).json();
    expect(list.documents.map((d: Loose) => [d.id, d.text])).toEqual([["workshop", undefined]]);
    expect(list.nextCursor).toBeNull();

    const noCondition = await s.call("DELETE", `${DOCS}/workshop${DEV}`);
    expect(noCondition.status).toBe(428);
    const removed = await s.call("DELETE", `${DOCS}/workshop${DEV}`, {
      headers: { "if-match": frozen.headers.get("etag")! },
    });
    expect(removed.status).toBe(204);
    expect((await s.call("GET", `${DOCS}/workshop${DEV}`)).status).toBe(404);
  });

  it("refuses bad input with typed errors naming the field", async () => {
    await start();
    const put = (
      path: string,
      body: unknown,
      headers: Record<string, string> = { "if-none-match": "*" },
    ) => s.call("PUT", path, { body, headers });
    const expectError = async (res: Response, status: number, code: string, path?: string) => {
      const body: Loose = await res.json();
      expect([res.status, body.error.code], JSON.stringify(body)).toEqual([status, code]);
      if (path) expect(body.error.path).toBe(path);
    };
    await expectError(
      await s.call("GET", `${DOCS}/workshop`),
      400,
      "invalid_request",
      "environment",
    );
    await expectError(
      await put(`${DOCS}/a${DEV}`, { title: "A", text: "x".repeat(8193) }),
      413,
      "memory_limit_exceeded",
      "text",
    );
    await expectError(
      await put(`${DOCS}/a${DEV}`, { title: "A", colour: "red" }),
      400,
      "invalid_request",
      "colour",
    );
    await expectError(
      await put(`${DOCS}/a${DEV}`, { text: "no title" }),
      400,
      "invalid_request",
      "title",
    );
    await expectError(
      await put(`${DOCS}/bad%20id${DEV}`, { title: "A" }),
      400,
      "invalid_request",
      "id",
    );
    await expectError(
      await put("/projects/default/memory/Bad_Res/documents/a?environment=development", {
        title: "A",
      }),
      400,
      "invalid_request",
      "resource",
    );
    await expectError(
      await put(`${DOCS}/a${DEV}`, { title: "A" }, {}),
      428,
      "precondition_required",
      "If-Match",
    );
    await expectError(
      await put(`${DOCS}/a${DEV}`, { text: "x" }, { "if-match": "3" }),
      400,
      "invalid_request",
      "If-Match",
    );
    await expectError(await put(`${DOCS}/a${DEV}`, "not json" as never), 400, "invalid_json");
    const big = JSON.stringify({ title: "A", text: "x".repeat(70_000) });
    await expectError(await put(`${DOCS}/a${DEV}`, big), 413, "body_too_large");
    await expectError(await s.call("GET", `${DOCS}${DEV}&cursor=zzz`), 400, "invalid_cursor");
    await expectError(
      await s.call("GET", `${DOCS}${DEV}&limit=51`),
      400,
      "invalid_request",
      "limit",
    );
    await expectError(
      await s.call("POST", "/sessions", {
        body: { agentId: "workshop", memory: { notes: { scope: "document", id: "nope" } } },
      }),
      400,
      "invalid_input",
      "memory.notes.id",
    );
  });

  it("a key sees only its own project's memory", async () => {
    await start();
    await s.call("PUT", `${DOCS}/workshop${DEV}`, {
      body: { title: "A", text: "secret" },
      headers: { "if-none-match": "*" },
    });
    const asB = (
      method: string,
      path: string,
      init: { body?: unknown; headers?: Record<string, string> } = {},
    ) => s.call(method, path, { ...init, headers: { "x-api-key": B, ...init.headers } });
    for (const [method, path] of [
      ["GET", `/projects/default/memory${DEV}`],
      ["GET", `${DOCS}${DEV}`],
      ["GET", `${DOCS}/workshop${DEV}`],
      ["DELETE", `${DOCS}/workshop${DEV}`],
    ] as const) {
      const res = await asB(method, path, { headers: { "if-match": '"1"' } });
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(((await res.json()) as Loose).error.code).toBe("project_not_found");
    }
    const own: Loose = await (
      await asB("GET", `/projects/team-b/memory/notes/documents${DEV}`)
    ).json();
    expect(own.documents).toEqual([]);
    expect(
      (await asB("GET", `/projects/team-b/memory/notes/documents/workshop${DEV}`)).status,
    ).toBe(404);
    // B's session cannot bind A's document: in B's project it does not exist.
    const bind = await asB("POST", "/sessions", {
      body: { agentId: "workshop", memory: { notes: { scope: "document", id: "workshop" } } },
    });
    expect(bind.status).toBe(400);
    expect(((await (await s.call("GET", `${DOCS}/workshop${DEV}`)).json()) as Loose).text).toBe(
      "secret",
    );
  });
});
