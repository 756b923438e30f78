import { defineTool, useModel, useTool } from "@opencomputer/agent";
import { afterEach, describe, expect, it } from "vitest";
import type { Auth } from "../src/index.ts";
import { KEY, type Loose, startServer, type TestServer } from "./helpers.ts";

const B = "key-of-team-b";
/** KEY belongs to project `default`, B to `team-b`. */
const twoProjects: Auth = {
  async verify(key) {
    if (key === KEY) return { projectId: "default" };
    if (key === B) return { projectId: "team-b" };
    return null;
  },
};

const change = defineTool({
  name: "change",
  description: "Change something, after a person approves",
  input: { type: "object", properties: {}, additionalProperties: false },
  preview: () => ({ title: "Change it" }),
  apply: () => ({ done: true }),
});
function agent() {
  useModel("script/test");
  useTool(change);
  return "Propose a change.";
}

let s: TestServer;
afterEach(async () => s?.close());

describe("per-project isolation", () => {
  it("hides every session route and approval of another project behind a 404", async () => {
    s = await startServer({
      agents: { agent },
      steps: [{ toolCalls: [{ name: "change", input: {} }] }, { text: "proposed" }],
      handler: { auth: twoProjects },
    });
    const created: Loose = await (
      await s.call("POST", "/sessions", { body: { agentId: "agent" } })
    ).json();
    const id = created.session.id as string;
    const turn: Loose = await (
      await s.call("POST", `/sessions/${id}/turns`, { body: { input: { text: "go" } } })
    ).json();
    await s.runtime.sessions.waitForTurn(id, turn.turnId);
    const approvals: Loose = await (await s.call("GET", `/sessions/${id}/approvals`)).json();
    const approvalId = approvals.approvals[0].id as string;

    const asB = (method: string, path: string, body?: unknown) =>
      s.call(method, path, { headers: { "x-api-key": B }, ...(body ? { body } : {}) });
    const attempts: [string, string, unknown?][] = [
      ["GET", `/sessions/${id}`],
      ["GET", `/sessions/${id}/events?after=0`],
      ["GET", `/sessions/${id}/results`],
      ["GET", `/sessions/${id}/approvals`],
      ["PATCH", `/sessions/${id}/labels`, { set: { a: "b" } }],
      ["POST", `/sessions/${id}/turns`, { input: { text: "hijack" } }],
      ["POST", `/sessions/${id}/interrupt`],
      ["POST", `/sessions/${id}/end`],
      ["GET", `/approvals/${approvalId}`],
      ["POST", `/approvals/${approvalId}/decision`, { decision: "approve" }],
    ];
    for (const [method, path, body] of attempts) {
      const res = await asB(method, path, body);
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(((await res.json()) as Loose).error.code).toBe("not_found");
    }
    // The other project's answer is the same as for an id that does not exist.
    const unknown: Loose = await (await asB("GET", "/sessions/ses_nope")).json();
    expect(unknown.error.code).toBe("not_found");

    // Nothing B tried changed A's session.
    const after: Loose = await (await s.call("GET", `/sessions/${id}`)).json();
    expect(after.status).not.toBe("ended");
    expect(after.labels).toEqual({});
    expect(after.turns).toHaveLength(1);
    expect(after.projectId).toBe("default");
    const still: Loose = await (await s.call("GET", `/approvals/${approvalId}`)).json();
    expect(still.approval.status).toBe("pending");

    // Listings are per project.
    const listB: Loose = await (await asB("GET", "/sessions")).json();
    expect(listB.sessions).toEqual([]);
    const listA: Loose = await (await s.call("GET", "/sessions")).json();
    expect(listA.sessions.map((r: Loose) => r.id)).toEqual([id]);
  });

  it("scopes Idempotency-Key per project", async () => {
    s = await startServer({ agents: { agent }, handler: { auth: twoProjects } });
    const headers = { "idempotency-key": "same-key" };
    const a: Loose = await (
      await s.call("POST", "/sessions", { body: { agentId: "agent" }, headers })
    ).json();
    const bRes = await s.call("POST", "/sessions", {
      body: { agentId: "agent" },
      headers: { ...headers, "x-api-key": B },
    });
    expect(bRes.status).toBe(201);
    const b: Loose = await bRes.json();
    expect(b.session.id).not.toBe(a.session.id);
    const bAgain = await s.call("POST", "/sessions", {
      body: { agentId: "agent" },
      headers: { ...headers, "x-api-key": B },
    });
    expect(bAgain.status).toBe(200);
    expect(((await bAgain.json()) as Loose).session.id).toBe(b.session.id);
    const listB: Loose = await (
      await s.call("GET", "/sessions", { headers: { "x-api-key": B } })
    ).json();
    expect(listB.sessions.map((r: Loose) => r.projectId)).toEqual(["team-b"]);
  });
});
