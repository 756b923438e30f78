// The memory pages' sample, end to end through `opencomputer dev` (a real server process that
// builds the project) on the scripted model: the owner creates the document, a session bound to
// it read-write saves a note (memory.saved in its log), the owner reads it, and a second session
// with the same binding starts with the note in its instructions (its scripted model then plays
// the same first step, a save, again).
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DevServer, startDev } from "./dev-server.ts";

// biome-ignore lint/suspicious/noExplicitAny: replies are checked with expect
type Loose = any;

let dev: DevServer | undefined;
beforeAll(async () => {
  dev = await startDev(
    "memory-sample",
    join(import.meta.dirname, "fixtures", "memory-project"),
    "script/workshop",
  );
}, 90_000);
afterAll(() => dev?.stop());

async function call(
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
) {
  const response = await fetch(dev!.url + path, {
    method,
    headers: { "x-api-key": dev!.key, "content-type": "application/json", ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, body: (text ? JSON.parse(text) : undefined) as Loose };
}

async function settle(sessionId: string, turnId: string): Promise<Loose> {
  for (let i = 0; i < 200; i++) {
    const { body } = await call("GET", `/sessions/${sessionId}`);
    const turn = body.turns.find((t: Loose) => t.id === turnId);
    if (turn && !["queued", "running"].includes(turn.status)) return turn;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error("the turn did not settle");
}

const binding = { notes: { scope: "document", id: "workshop", access: "read-write" } };
const DOC = "/projects/default/memory/notes/documents/workshop?environment=development";

describe("the memory sample on opencomputer dev", { timeout: 120_000 }, () => {
  it("saves a note in one session and recalls it in the next", async () => {
    const created = await call("PUT", DOC, { title: "Workshop notes" }, { "if-none-match": "*" });
    expect(created.status).toBe(201);

    const first = await call(
      "POST",
      "/sessions",
      { agentId: "workshop@development", memory: binding },
      { "idempotency-key": "workshop-session-1" },
    );
    expect(first.status).toBe(201);
    const id1 = first.body.session.id as string;
    const sent = await call("POST", `/sessions/${id1}/turns`, {
      input: {
        text: "Remember that the exercises must run on Node.js 22 and need no paid services.",
      },
    });
    expect(await settle(id1, sent.body.turnId)).toMatchObject({ status: "completed", error: null });
    const events = (await call("GET", `/sessions/${id1}/events?after=0`)).body.events as Loose[];
    const saved = events.filter((e) => e.type === "memory.saved");
    const doc = (await call("GET", DOC)).body;
    expect(doc).toMatchObject({
      text: "Exercises run on Node.js 22 and need no paid services.",
      summary: "Runtime requirements",
      writer: { kind: "agent", sessionId: id1 },
    });
    expect(saved.map((e) => e.data)).toEqual([
      { resource: "notes", documentId: "workshop", revision: doc.revision, bytes: doc.bytes },
    ]);

    const second = await call(
      "POST",
      "/sessions",
      { agentId: "workshop@development", memory: binding },
      { "idempotency-key": "workshop-session-2" },
    );
    const id2 = second.body.session.id as string;
    const asked = await call("POST", `/sessions/${id2}/turns`, {
      input: { text: "What must the exercises satisfy?" },
    });
    expect(await settle(id2, asked.body.turnId)).toMatchObject({ status: "completed" });
    const rendered = (
      (await call("GET", `/sessions/${id2}/events?after=0`)).body.events as Loose[]
    ).find((e) => e.type === "agent.rendered");
    expect(rendered.data.instructions).toContain(
      "Exercises run on Node.js 22 and need no paid services.",
    );
    // shell comes to every session (docs/computers.md#every-session-has-shell).
    expect(rendered.data.enabledTools).toEqual(["shell", "memory_save"]);
  });
});
