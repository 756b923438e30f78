// Which model answers a step, and what agent.rendered says about it: an agent without useModel
// gets the runtime's default model; a resolver's override (OPENCOMPUTER_MODEL) replaces any
// choice and the event names both; a default that cannot serve fails naming the agent.

import { useModel } from "@opencomputer/agent";
import { anthropicProvider } from "@opencomputer/models";
import { DEFAULT_MODEL } from "@opencomputer/runtime";
import { afterEach, describe, expect, it } from "vitest";
import { type Harness, harness, ofType } from "./harness.ts";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** Anthropic as a runtime without ANTHROPIC_API_KEY has it (the factory checks the key). */
const noKey = anthropicProvider({ env: {} });
const withoutKey = (name: string) => noKey(name, { projectDir: "/", agentId: "test" });

function plain() {
  return "Answer briefly.";
}
function picky() {
  useModel("anthropic/claude-sonnet-4.6");
  return "Answer briefly.";
}
function scripted() {
  useModel("script/test");
  return "Answer briefly.";
}

describe("the model of a step", () => {
  it("gives an agent without useModel the default model, and agent.rendered says so", async () => {
    h = await harness({
      agents: { plain },
      steps: [{ text: "hello" }],
      model: "", // no override: the default itself answers
      defaultModel: "script/test",
    });
    const { events } = await h.run("hi");
    expect(ofType(events, "turn.completed")).toHaveLength(1);
    expect(ofType(events, "agent.rendered")[0]!.data).toMatchObject({
      model: "script/test",
      requestedModel: null,
      modelSource: "default",
    });
  });

  it("names the agent's own choice as such", async () => {
    h = await harness({ agents: { scripted }, steps: [{ text: "hello" }], model: "" });
    const { events } = await h.run("hi");
    expect(ofType(events, "agent.rendered")[0]!.data).toMatchObject({
      model: "script/test",
      requestedModel: "script/test",
      modelSource: "agent",
    });
  });

  it("shows the model that answers and the requested one when an override replaced it", async () => {
    h = await harness({ agents: { picky, plain }, steps: [{ text: "a" }, { text: "b" }] });
    const { events } = await h.run("hi", "picky");
    expect(ofType(events, "agent.rendered")[0]!.data).toMatchObject({
      model: "script/test",
      requestedModel: "anthropic/claude-sonnet-4.6",
      modelSource: "override",
    });
    expect(ofType(events, "usage.recorded")[0]!.data.model).toBe("script/test");
    const other = await h.run("hi", "plain");
    expect(ofType(other.events, "agent.rendered")[0]!.data).toMatchObject({
      model: "script/test",
      requestedModel: null,
      modelSource: "override",
    });
  });

  it("fails with model_unavailable naming the agent when the default cannot serve", async () => {
    expect(DEFAULT_MODEL).toBe("anthropic/claude-sonnet-4.6");
    h = await harness({
      agents: { plain },
      model: "",
      providers: { anthropic: withoutKey },
    });
    const { events } = await h.run("hi");
    expect(ofType(events, "agent.rendered")[0]!.data).toMatchObject({
      model: DEFAULT_MODEL,
      requestedModel: null,
      modelSource: "default",
    });
    const failed = ofType(events, "turn.failed")[0]!.data;
    expect(failed).toMatchObject({ code: "model_unavailable", model: DEFAULT_MODEL });
    expect(failed.message).toContain('Agent "plain" selects no model');
    expect(failed.message).toContain("ANTHROPIC_API_KEY");
    expect(failed.message).toContain('useModel("provider/model")');
  });

  it("leaves the failure of a model the agent chose as it was", async () => {
    h = await harness({
      agents: { picky },
      model: "",
      providers: { anthropic: withoutKey },
    });
    const { events } = await h.run("hi");
    const failed = ofType(events, "turn.failed")[0]!.data;
    expect(failed).toMatchObject({ code: "model_unavailable" });
    expect(failed.message).not.toContain("selects no model");
  });
});
