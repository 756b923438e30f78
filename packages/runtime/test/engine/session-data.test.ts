// Session data (`POST /sessions {data}`, `useSessionData`) in both execution modes: the agent
// is in fixtures/session-data-agents.ts.

import { fileURLToPath } from "node:url";
import { SESSION_DATA_LIMIT_BYTES } from "@opencomputer/protocol";
import { afterEach, describe, expect, it } from "vitest";
import { EXECUTIONS, type Harness, harness, ofType, TEST_WORKERS } from "./harness.ts";

const AGENTS = fileURLToPath(new URL("./fixtures/session-data-agents.ts", import.meta.url));

let h: Harness;
afterEach(async () => {
  await h?.close();
});

describe.each(EXECUTIONS)("session data (%s)", (execution) => {
  it("is read on every render, chooses tools, and is shown in the session record", async () => {
    h = await harness({
      agentsModule: AGENTS,
      execution,
      workers: TEST_WORKERS,
      steps: [{ toolCalls: [{ name: "publish_brief", input: {} }] }, { text: "published" }],
    });
    const data = { campaign_name: "Spring launch", tags: ["b2b", "eu"], brief_approved: true };
    const { session } = await h.runtime.sessions.create({ agentId: "planner", data });
    expect(session.data).toEqual(data);
    expect(session.parent).toBeNull();
    const { turnId } = await h.runtime.sessions.sendTurn(session.id, { text: "go" });
    const turn = await h.runtime.sessions.waitForTurn(session.id, turnId, { timeoutMs: 20_000 });
    expect(turn.status).toBe("completed");
    const events = await h.events(session.id);
    const renders = ofType(events, "agent.rendered");
    expect(renders).toHaveLength(2);
    for (const r of renders) {
      expect(r.data.instructions).toBe(
        "Help plan the campaign. Campaign: Spring launch. Tags: b2b, eu. Publishing is available.",
      );
      expect(r.data.enabledTools).toEqual(["publish_brief"]);
    }
    expect(ofType(events, "tool.completed")[0]!.data.output).toEqual({ published: true });
    expect(ofType(events, "session.created")[0]!.data.data).toEqual(data);
    const view = await h.runtime.sessions.get(session.id);
    expect(view.data).toEqual(data);
  });

  it("is absent when the session has none: the agent sees undefined for every key", async () => {
    h = await harness({
      agentsModule: AGENTS,
      execution,
      workers: TEST_WORKERS,
      steps: [{ text: "ok" }],
    });
    const { sessionId, events } = await h.run("hi", "planner");
    expect(ofType(events, "agent.rendered")[0]!.data).toMatchObject({
      instructions: "Help plan the campaign. No campaign yet. Do not publish yet.",
      enabledTools: [],
    });
    expect(ofType(events, "session.created")[0]!.data).not.toHaveProperty("data");
    expect((await h.runtime.sessions.get(sessionId)).data).toEqual({});
  });

  it("is read-only: agent code that changes it fails its render", async () => {
    h = await harness({
      agentsModule: AGENTS,
      execution,
      workers: TEST_WORKERS,
      steps: [{ text: "ok" }],
    });
    const { session } = await h.runtime.sessions.create({
      agentId: "mutator",
      data: { tags: ["a"] },
    });
    const { turnId } = await h.runtime.sessions.sendTurn(session.id, { text: "go" });
    const turn = await h.runtime.sessions.waitForTurn(session.id, turnId, { timeoutMs: 20_000 });
    expect(turn.status).toBe("failed");
    expect(turn.error?.code).toBe("agent_failed");
    expect((await h.runtime.sessions.get(session.id)).data).toEqual({ tags: ["a"] });
  });
});

describe("session data is checked at creation", () => {
  it("refuses what is not a bounded JSON object, naming the field", async () => {
    h = await harness({ agentsModule: AGENTS, steps: [] });
    const create = (data: unknown) =>
      h.runtime.sessions.create({ agentId: "planner", data: data as never });
    await expect(create([1])).rejects.toMatchObject({ code: "invalid_input", path: "data" });
    await expect(create("x")).rejects.toMatchObject({ code: "invalid_input", path: "data" });
    await expect(create({ when: new Date() })).rejects.toMatchObject({
      code: "invalid_input",
      path: "data.when",
    });
    await expect(create({ n: Number.NaN })).rejects.toMatchObject({ path: "data.n" });
    await expect(create({ "": 1 })).rejects.toMatchObject({ path: "data" });
    const big = { blob: "x".repeat(SESSION_DATA_LIMIT_BYTES) };
    await expect(create(big)).rejects.toMatchObject({ code: "invalid_input", path: "data" });
    const { sessions } = await h.runtime.sessions.list();
    expect(sessions).toHaveLength(0);
  });

  it("a replayed create keeps the data it was first created with", async () => {
    h = await harness({ agentsModule: AGENTS, steps: [] });
    const first = await h.runtime.sessions.create({
      agentId: "planner",
      data: { locale: "fr" },
      idempotencyKey: "k1",
    });
    const again = await h.runtime.sessions.create({
      agentId: "planner",
      data: { locale: "de" },
      idempotencyKey: "k1",
    });
    expect(again.created).toBe(false);
    expect(again.session.id).toBe(first.session.id);
    expect(again.session.data).toEqual({ locale: "fr" });
  });
});
