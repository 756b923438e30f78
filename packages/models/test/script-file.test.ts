// The scripted model's file cache: a rewritten script is used by the very next turn, as an
// author's test expects when it writes a script and sends a turn at once. (A cache trusted for
// 100 ms with a file watcher was tried to save the stat per step, and broke exactly that.) The
// steps that continue a turn use the copy its first step read.
import { mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { LanguageModelV3Prompt } from "@ai-sdk/provider";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadScript } from "../src/script-file.ts";
import { createScriptModel } from "../src/script-model.ts";

let dir: string;
const file = () => join(dir, "opencomputer", "scripts", "s.json");
const write = (text: string) => writeFileSync(file(), JSON.stringify({ steps: [{ text }] }));
const textOf = () => loadScript(dir, "s", "script/s").steps[0]?.text;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "oc-script-"));
  mkdirSync(join(dir, "opencomputer", "scripts"), { recursive: true });
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("loadScript", () => {
  it("sees a rewrite at the next call", () => {
    write("one");
    expect(textOf()).toBe("one");
    expect(textOf()).toBe("one");
    write("two, longer");
    expect(textOf()).toBe("two, longer");
  });

  it("sees a file replaced by rename, as editors save", () => {
    write("first");
    expect(textOf()).toBe("first");
    const tmp = join(dir, "opencomputer", "scripts", ".s.json.tmp");
    writeFileSync(tmp, JSON.stringify({ steps: [{ text: "second!" }] }));
    renameSync(tmp, file());
    expect(textOf()).toBe("second!");
    write("third, after the rename");
    expect(textOf()).toBe("third, after the rename");
  });

  it("reports a removed script as model_unavailable, and bad JSON naming the file", () => {
    write("here");
    expect(textOf()).toBe("here");
    rmSync(file());
    expect(() => textOf()).toThrow(expect.objectContaining({ code: "model_unavailable" }));
    writeFileSync(file(), "{ not json");
    expect(() => textOf()).toThrow(/s\.json is not valid JSON/);
  });

  it("is looked at again when a step starts a turn, not when one continues it", async () => {
    const steps = (tag: string) => ({
      steps: [{ text: `${tag} 1`, toolCalls: [{ name: "t", input: {} }] }, { text: `${tag} 2` }],
    });
    writeFileSync(file(), JSON.stringify(steps("old")));
    const model = createScriptModel("s", { projectDir: dir, agentId: "a" });
    const user = { role: "user" as const, content: [{ type: "text" as const, text: "hi" }] };
    const assistant = {
      role: "assistant" as const,
      content: [{ type: "text" as const, text: "x" }],
    };
    const tool = {
      role: "tool" as const,
      content: [
        {
          type: "tool-result" as const,
          toolCallId: "c",
          toolName: "t",
          output: { type: "json" as const, value: null },
        },
      ],
    };
    const textOf = async (prompt: LanguageModelV3Prompt) => {
      const { content } = await model.doGenerate({ prompt });
      return content.find((p) => p.type === "text")?.text;
    };
    expect(await textOf([user])).toBe("old 1");
    // Rewritten while the turn runs: its next step still plays the script it started with.
    writeFileSync(file(), JSON.stringify(steps("new, longer")));
    expect(await textOf([user, assistant, tool])).toBe("old 2");
    // The next turn starts with the user's message: it reads the new script.
    expect(await textOf([user])).toBe("new, longer 1");
    expect(await textOf([user, assistant, tool])).toBe("new, longer 2");
  });

  it("refuses a script name that is not a plain file name when the model is asked", async () => {
    const model = createScriptModel("../secrets", { projectDir: dir, agentId: "a" });
    const prompt: LanguageModelV3Prompt = [
      { role: "user", content: [{ type: "text", text: "hi" }] },
    ];
    await expect(model.doGenerate({ prompt })).rejects.toMatchObject({
      code: "model_unavailable",
      message: expect.stringMatching(/must be a plain file name/),
    });
    expect(() => loadScript(dir, ".hidden", "script/.hidden")).toThrow(/plain file name/);
  });
});

describe("a step's webSearch", () => {
  const load = (step: unknown) => {
    writeFileSync(file(), JSON.stringify({ steps: [step] }));
    return loadScript(dir, "s", "script/s");
  };

  it("takes searches with results or a provider error code", () => {
    const step = {
      webSearch: [
        { query: "q", results: [{ url: "https://a.example/", title: "A" }, { url: "https://b/" }] },
        { query: "r", error: "max_uses_exceeded" },
      ],
      text: "answer",
    };
    expect(load(step).steps[0]).toEqual(step);
  });

  it("refuses malformed searches naming the path", () => {
    expect(() => load({ webSearch: {} })).toThrow(/steps\[0\]\.webSearch must be an array/);
    expect(() => load({ webSearch: [{ results: [] }] })).toThrow(
      /steps\[0\]\.webSearch\[0\]\.query must be a string/,
    );
    expect(() => load({ webSearch: [{ query: "q", results: [{ title: "t" }] }] })).toThrow(
      /webSearch\[0\]\.results\[0\]\.url must be a string/,
    );
    expect(() => load({ websearch: [] })).toThrow(
      /steps\[0\]\.websearch is not a known step field/,
    );
  });
});
