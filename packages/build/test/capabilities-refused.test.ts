// What doctor and build refuse about MCP servers and skills, each with the file (and line) at
// fault: an unknown server id, a server whose connection cannot reach it, skills with missing
// fields or files, a name that is not its directory's, and a symbolic link out of the skill.

import { mkdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { buildProject } from "../src/build.ts";
import { checkProject } from "../src/check.ts";

const OUTPUT = fileURLToPath(new URL("../test-output", import.meta.url));
const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

function project(files: Record<string, string>): string {
  const dir = join(OUTPUT, `refused-caps-${process.pid}-${Math.random().toString(36).slice(2, 8)}`);
  made.push(dir);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

const AGENT = "opencomputer/agents/a/agent.ts";
const SKILLS = "opencomputer/agents/a/skills";
const plainAgent = `import { useModel } from "@opencomputer/agent";
export default function Agent() {
  useModel("script/x");
  return "x";
}
`;

describe("MCP servers that doctor and build refuse", () => {
  it("useMcpServer with an id no defineMcpServer declares: file and line of the call", async () => {
    const dir = project({
      [AGENT]: `import { defineMcpServer, useMcpServer } from "@opencomputer/agent";
const docs = defineMcpServer({ id: "docs", url: "https://mcp.example.com/mcp" });
export default function Agent() {
  useMcpServer(docs);
  useMcpServer("wiki");
  return "x";
}
`,
    });
    const { errors } = await checkProject(dir);
    expect(errors).toEqual([
      expect.objectContaining({
        code: "mcp_server_unknown",
        file: AGENT,
        line: 5,
        message: expect.stringContaining('declares no MCP server "wiki" (declared: docs)'),
      }),
    ]);
  });

  it("a server whose connection has another origin, and one naming no connection", async () => {
    const dir = project({
      [AGENT]: `import { defineMcpServer, useMcpServer } from "@opencomputer/agent";
const docs = defineMcpServer({ id: "docs", url: "https://mcp.example.com/mcp", connection: "api" });
const wiki = defineMcpServer({ id: "wiki", url: "https://wiki.example.com/mcp", connection: "gone" });
export default function Agent() {
  useMcpServer(docs);
  useMcpServer(wiki);
  return "x";
}
`,
      "opencomputer/agents/a/connections/api.ts": `import { defineConnection } from "@opencomputer/agent";
export const api = defineConnection({ id: "api", origin: "https://api.example.com" });
`,
    });
    const { errors, deployments } = await buildProject(dir);
    expect(deployments).toEqual([]);
    expect(errors.map((e) => [e.code, e.file, e.line])).toEqual([
      ["mcp_connection_mismatch", AGENT, 2],
      ["mcp_connection_unknown", AGENT, 3],
    ]);
    expect(errors[0]?.message).toContain("its origin is https://api.example.com");
  });

  it("defineMcpServer's own refusal names the module", async () => {
    const dir = project({
      [AGENT]: `import { defineMcpServer } from "@opencomputer/agent";
defineMcpServer({ id: "docs", url: "http://mcp.example.com/mcp" });
export default function Agent() {
  return "x";
}
`,
    });
    const { errors } = await checkProject(dir);
    expect(errors[0]).toMatchObject({ file: AGENT, line: 2 });
    expect(errors[0]?.message).toContain("must use https");
  });
});

describe("skills that doctor and build refuse", () => {
  it.each([
    [
      "a missing description",
      { "release/SKILL.md": "---\nname: release\n---\nDo it." },
      "skill_frontmatter_invalid",
      "release/SKILL.md",
      '"description" is missing',
    ],
    [
      "no frontmatter",
      { "release/SKILL.md": "# Release\nDo it." },
      "skill_frontmatter_invalid",
      "release/SKILL.md",
      "must start with a frontmatter block",
    ],
    [
      "a name that is not the directory's",
      { "release/SKILL.md": "---\nname: releases\ndescription: x\n---\n" },
      "skill_frontmatter_invalid",
      "release/SKILL.md",
      "they must be the same",
    ],
    [
      "no SKILL.md",
      { "release/NOTES.md": "notes" },
      "skill_missing_file",
      "release",
      "has no SKILL.md",
    ],
  ])("%s", async (_what, files, code, file, fragment) => {
    const dir = project({
      [AGENT]: plainAgent,
      ...Object.fromEntries(Object.entries(files).map(([p, t]) => [`${SKILLS}/${p}`, t])),
    });
    const { errors } = await checkProject(dir);
    expect(errors).toEqual([
      expect.objectContaining({
        code,
        file: `${SKILLS}/${file}`,
        message: expect.stringContaining(fragment),
      }),
    ]);
  });

  it("a symbolic link out of the skill, naming the link", async () => {
    const dir = project({
      [AGENT]: plainAgent,
      [`${SKILLS}/release/SKILL.md`]: "---\nname: release\ndescription: Write notes.\n---\nGo.",
      "secret.txt": "do not package me",
    });
    symlinkSync(join(dir, "secret.txt"), join(dir, SKILLS, "release", "extra.md"));
    const { errors, deployments } = await buildProject(dir);
    expect(deployments).toEqual([]);
    expect(errors).toEqual([
      expect.objectContaining({
        code: "skill_file_outside",
        file: `${SKILLS}/release/extra.md`,
        message: expect.stringContaining("is a symbolic link"),
      }),
    ]);
  });
});
