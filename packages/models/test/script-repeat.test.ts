// A script with `repeatFrom` answers any number of messages: past its last step it plays the
// steps from `repeatFrom` on again, so a demo conversation never runs out of steps. Without it,
// asking past the end still fails, naming the step.
import { mkdirSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { LanguageModelV3Prompt } from "@ai-sdk/provider";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadScript } from "../src/script-file.ts";
import { createScriptModel } from "../src/script-model.ts";

let dir: string;
const file = () => join(dir, "opencomputer", "scripts", "s.json");

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "oc-script-repeat-"));
  mkdirSync(join(dir, "opencomputer", "scripts"), { recursive: true });
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A conversation after `turns` whole turns of one assistant message each, then a new message. */
function promptAfter(turns: number): LanguageModelV3Prompt {
  const prompt: LanguageModelV3Prompt = [];
  for (let i = 0; i < turns; i++) {
    prompt.push({ role: "user", content: [{ type: "text", text: `m${i}` }] });
    prompt.push({ role: "assistant", content: [{ type: "text", text: `a${i}` }] });
  }
  prompt.push({ role: "user", content: [{ type: "text", text: "next" }] });
  return prompt;
}

async function textAt(turns: number): Promise<string | undefined> {
  const model = createScriptModel("s", { projectDir: dir, agentId: "a" });
  const { content } = await model.doGenerate({ prompt: promptAfter(turns) });
  return content.find((p) => p.type === "text")?.text;
}

describe("repeatFrom", () => {
  it("plays the steps from repeatFrom on again, past the last one", async () => {
    const steps = ["intro", "one", "two"].map((text) => ({ text }));
    writeFileSync(file(), JSON.stringify({ steps, repeatFrom: 1 }));
    const played = [];
    for (let turns = 0; turns < 7; turns++) played.push(await textAt(turns));
    expect(played).toEqual(["intro", "one", "two", "one", "two", "one", "two"]);
  });

  it("without it, fails past the last step with model_rejected naming the step", async () => {
    writeFileSync(file(), JSON.stringify({ steps: [{ text: "only" }] }));
    expect(await textAt(0)).toBe("only");
    await expect(textAt(1)).rejects.toMatchObject({
      code: "model_rejected",
      message: expect.stringMatching(/has 1 steps; step 2 was requested/),
    });
  });

  it("refuses a repeatFrom outside the steps and an unknown top-level field", () => {
    writeFileSync(file(), JSON.stringify({ steps: [{ text: "a" }], repeatFrom: 1 }));
    expect(() => loadScript(dir, "s", "script/s")).toThrow(
      /s\.json: repeatFrom must be a step index from 0 to 0/,
    );
    writeFileSync(file(), JSON.stringify({ steps: [{ text: "a" }], repeat: true }));
    expect(() => loadScript(dir, "s", "script/s")).toThrow(/s\.json: repeat is not a known field/);
  });
});
