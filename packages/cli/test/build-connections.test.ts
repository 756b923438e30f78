// The build records connections per agent (its own, then the project's shared ones) and refuses
// declarations defineConnection refuses, naming the module.

import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { buildProject } from "@opencomputer/build";
import { afterAll, describe, expect, it } from "vitest";

const repo = resolve(import.meta.dirname, "../../..");
// Inside the repository so `@opencomputer/agent` resolves as in a user's project.
const root = join(repo, "test-output", `build-connections-${process.pid}`);
afterAll(() => rmSync(root, { recursive: true, force: true }));

function project(name: string, files: Record<string, string>): string {
  const dir = join(root, name);
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    writeFileSync(join(dir, file), text);
  }
  return dir;
}

const agent = `import { useModel } from "@opencomputer/agent";
export default function Agent() { useModel("script/x"); return "hi"; }`;
const connection = (id: string, origin: string, extra = "") =>
  `import { bearer, defineConnection, useSecret } from "@opencomputer/agent";
export const c = defineConnection({ id: "${id}", origin: "${origin}", headers: { authorization: bearer(useSecret("KEY")) }${extra} });`;

describe("connections in the build", { timeout: 120_000 }, () => {
  it("records each agent's own connections and the shared ones, own first", async () => {
    const dir = project("ok", {
      "opencomputer/agents/a/agent.ts": agent,
      "opencomputer/agents/a/connections/crm.ts": connection("crm", "https://own.example"),
      "opencomputer/agents/b/agent.ts": agent,
      "opencomputer/connections/crm.ts": connection("crm", "https://shared.example"),
      "opencomputer/connections/mail.ts": connection(
        "mail",
        "https://mail.example",
        `, methods: ["POST"]`,
      ),
    });
    const built = await buildProject(dir);
    expect(built.errors).toEqual([]);
    const [a, b] = built.deployments;
    expect(a!.connections!.map((c) => [c.id, c.origin])).toEqual([
      ["crm", "https://own.example"],
      ["mail", "https://mail.example"],
    ]);
    expect(b!.connections!.map((c) => [c.id, c.origin])).toEqual([
      ["crm", "https://shared.example"],
      ["mail", "https://mail.example"],
    ]);
    expect(b!.connections![1]).toEqual({
      id: "mail",
      origin: "https://mail.example",
      headers: { authorization: { secret: "KEY", prefix: "Bearer " } },
      methods: ["POST"],
      pathPrefix: "/",
    });
    // Connections are part of what the id covers: a changed origin is a new deployment.
    writeFileSync(
      join(dir, "opencomputer/connections/mail.ts"),
      connection("mail", "https://mail2.example"),
    );
    const rebuilt = await buildProject(dir);
    expect(rebuilt.deployments[0]!.id).not.toBe(a!.id);
  });

  it("refuses a literal credential and duplicate ids, naming the module", async () => {
    const dir = project("bad", {
      "opencomputer/agents/a/agent.ts": agent,
      "opencomputer/agents/a/connections/one.ts": connection("dup", "https://one.example"),
      "opencomputer/agents/a/connections/two.ts": connection("dup", "https://two.example"),
      "opencomputer/connections/leak.ts": `import { defineConnection } from "@opencomputer/agent";
export const c = defineConnection({ id: "leak", origin: "https://x.example", headers: { authorization: "Bearer sk_live" } });`,
    });
    const built = await buildProject(dir);
    expect(built.deployments).toEqual([]);
    expect(built.errors.map((e) => [e.code, e.file])).toEqual(
      expect.arrayContaining([
        ["connection_invalid", "opencomputer/connections/leak.ts"],
        ["connection_id_duplicate", "opencomputer/agents/a/connections/two.ts"],
      ]),
    );
    expect(built.errors.find((e) => e.code === "connection_invalid")!.message).toContain(
      "headers.authorization",
    );
  });
});
