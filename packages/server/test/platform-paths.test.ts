import { useModel } from "@opencomputer/agent";
import { afterEach, describe, expect, it } from "vitest";
import type { Auth } from "../src/index.ts";
import { matchRoute, routedPaths } from "../src/platform-paths.ts";
import { Router } from "../src/router.ts";
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

function planner() {
  useModel("script/test");
  return "Plan what you are asked to plan.";
}

let s: TestServer | undefined;
afterEach(async () => {
  await s?.close();
  s = undefined;
});

describe("the platform's paths", () => {
  it("serves the docs' curl commands under /api/managed-agents and /api/managed-agents/projects/<p>", async () => {
    s = await startServer({
      agents: { planner },
      steps: [{ text: "Here is the plan." }, { text: "Second answer." }],
      handler: { auth: twoProjects },
    });
    const created = await s!.call("POST", "/api/managed-agents/sessions", {
      body: { agentId: "planner@development" },
    });
    expect(created.status).toBe(201);
    const id = ((await created.json()) as Loose).session.id as string;

    // The docs' turn body: `input` is a string.
    const turn = await s!.call("POST", `/api/managed-agents/sessions/${id}/turns`, {
      body: { input: "Plan the workshop.", idempotencyKey: "message-42", mode: "queue" },
    });
    expect(turn.status).toBe(202);
    const { turnId } = (await turn.json()) as Loose;
    await s!.runtime.sessions.waitForTurn(id, turnId);

    const scoped = `/api/managed-agents/projects/default/sessions/${id}`;
    const got = (await (await s!.call("GET", scoped)).json()) as Loose;
    expect(got.turns[0].input).toEqual({ source: "user", text: "Plan the workshop." });
    const events = (await (
      await s!.call("GET", `/api/managed-agents/sessions/${id}/events?after=0`)
    ).json()) as Loose;
    expect(events.events.map((e: Loose) => e.type)).toContain("message.completed");
    const listed = (await (
      await s!.call("GET", "/api/managed-agents/projects/default/sessions")
    ).json()) as Loose;
    expect(listed.sessions.map((row: Loose) => row.id)).toEqual([id]);

    // The plain paths still answer as before.
    expect((await s!.call("GET", `/sessions/${id}`)).status).toBe(200);
  });

  it("answers 404 when the path names a project other than the key's, as for an unknown route", async () => {
    s = await startServer({ agents: { planner }, handler: { auth: twoProjects } });
    const created = (await (
      await s!.call("POST", "/api/managed-agents/projects/default/sessions", {
        body: { agentId: "planner" },
      })
    ).json()) as Loose;
    const id = created.session.id as string;
    const asB = (path: string) => s!.call("GET", path, { headers: { "x-api-key": B } });
    for (const path of [
      "/api/managed-agents/projects/default/sessions",
      `/api/managed-agents/projects/default/sessions/${id}`,
      `/api/managed-agents/projects/team-b/sessions/${id}`,
    ]) {
      const res = await asB(path);
      expect(res.status, path).toBe(404);
      expect(((await res.json()) as Loose).error.code).toBe("not_found");
    }
    // Team B's own project path lists its own (no) sessions.
    const own = await asB("/api/managed-agents/projects/team-b/sessions");
    expect(own.status).toBe(200);
    expect(((await own.json()) as Loose).sessions).toEqual([]);
    const wrongMine = await s!.call("POST", "/api/managed-agents/projects/team-b/sessions", {
      body: { agentId: "planner" },
    });
    expect(wrongMine.status).toBe(404);
  });

  it("refuses an empty string input with invalid_input naming input", async () => {
    s = await startServer({ agents: { planner } });
    const created = (await (
      await s!.call("POST", "/sessions", { body: { agentId: "planner" } })
    ).json()) as Loose;
    for (const input of ["", "   ", 42, null]) {
      const res = await s!.call("POST", `/sessions/${created.session.id}/turns`, {
        body: { input },
      });
      expect(res.status, JSON.stringify(input)).toBe(400);
      expect(((await res.json()) as Loose).error).toMatchObject({ code: "invalid_input" });
    }
  });
});

describe("routedPaths", () => {
  it("strips the platform prefix and offers the project-scoped reading second", () => {
    expect(routedPaths("/sessions/a")).toEqual([{ path: "/sessions/a" }]);
    expect(routedPaths("/api/managed-agents/sessions")).toEqual([{ path: "/sessions" }]);
    expect(routedPaths("/api/managed-agents/projects/p%201/memory/notes/documents")).toEqual([
      { path: "/projects/p%201/memory/notes/documents" },
      { path: "/memory/notes/documents", projectId: "p 1" },
    ]);
    expect(routedPaths("/api/managed-agents/projects/%E0%A4%A/sessions")).toBeNull();
    // Only the exact prefix: /api/managed-agentsX is no platform path.
    expect(routedPaths("/api/managed-agentsX/sessions")).toEqual([
      { path: "/api/managed-agentsX/sessions" },
    ]);
  });

  it("gives a route registered later (e.g. /event-subscriptions) both prefixes", async () => {
    const router = new Router();
    router.add("GET", "/event-subscriptions", async () => new Response("ok"));
    router.add("GET", "/projects/:projectId/own", async () => new Response("own"));
    for (const path of [
      "/event-subscriptions",
      "/api/managed-agents/event-subscriptions",
      "/api/managed-agents/projects/p/event-subscriptions",
    ]) {
      expect(matchRoute(router, "GET", path, "p").match.kind, path).toBe("found");
    }
    expect(
      matchRoute(router, "GET", "/api/managed-agents/projects/q/event-subscriptions", "p").match
        .kind,
    ).toBe("not_found");
    // A route that takes the project itself keeps it as a parameter.
    const own = matchRoute(router, "GET", "/api/managed-agents/projects/q/own", "p");
    expect(own.match).toMatchObject({ kind: "found", params: { projectId: "q" } });
  });
});
