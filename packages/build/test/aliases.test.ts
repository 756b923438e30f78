// Aliases and deploys: the first deployment of an agent sets both aliases; later builds move
// development only; production moves only when a deploy names it, or on a rollback. An upload
// to another project (a server's directory) is checked like a build and stored once.

import { appendFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { BUNDLE_FILE, deploymentContent, deploymentId, MANIFEST_FILE } from "../src/deployment.ts";
import {
  buildProject,
  createDeploymentAgents,
  createDeploymentCatalog,
  deploymentsDir,
  readAliases,
} from "../src/index.ts";
import { copyFixture } from "./helpers.ts";

const OUTPUT = fileURLToPath(new URL("../test-output", import.meta.url));
const clock = (iso: string) => () => new Date(iso);

const source = copyFixture("check-url");
// A server's project directory with no agent sources: it only receives uploads.
const server = join(OUTPUT, `server-${process.pid}-${Math.random().toString(36).slice(2, 8)}`);
mkdirSync(server, { recursive: true });
afterAll(() => {
  source.remove();
  rmSync(server, { recursive: true, force: true });
});

const TOOL = "opencomputer/agents/checker/tools/lookup-order.ts";
function edit(from: string, to: string) {
  const file = join(source.dir, TOOL);
  writeFileSync(file, readFileSync(file, "utf8").replace(from, to));
}
function upload(deploymentDir: string) {
  return {
    manifest: JSON.parse(readFileSync(join(deploymentDir, MANIFEST_FILE), "utf8")) as Record<
      string,
      unknown
    >,
    bundle: readFileSync(join(deploymentDir, BUNDLE_FILE)),
  };
}

describe("aliases", () => {
  const out = deploymentsDir(source.dir);
  let first = "";
  let second = "";

  it("the first build sets both aliases; the next moves development only", async () => {
    const built = await buildProject(source.dir, { now: clock("2026-01-01T00:00:00Z") });
    expect(built.errors).toEqual([]);
    first = built.deployments[0]!.id;
    expect(built.moved.map((m) => m.alias)).toEqual(["development", "production"]);
    edit("by ID", "by its ID");
    const rebuilt = await buildProject(source.dir, { now: clock("2026-01-02T00:00:00Z") });
    second = rebuilt.deployments[0]!.id;
    expect(rebuilt.moved).toEqual([
      {
        agentId: "checker",
        alias: "development",
        deploymentId: second,
        previous: first,
        at: "2026-01-02T00:00:00.000Z",
        reason: "build",
      },
    ]);
    expect(readAliases(out, "checker")).toMatchObject({ development: second, production: first });
    const agents = createDeploymentAgents(source.dir);
    expect((await agents.describe("checker@production")).deploymentId).toBe(first);
    expect((await agents.describe("checker@development")).deploymentId).toBe(second);
  });

  it("a build naming production moves it; the catalog shows where each alias points", async () => {
    const built = await buildProject(source.dir, { alias: "production", reason: "deploy" });
    expect(built.moved).toEqual([
      expect.objectContaining({ alias: "production", deploymentId: second, previous: first }),
    ]);
    const catalog = createDeploymentCatalog(source.dir);
    const [agent] = await catalog.agents();
    expect(agent).toMatchObject({
      id: "checker",
      aliases: { development: second, production: second },
      deployment: { id: second, aliases: ["development", "production"] },
    });
    expect(agent!.history.map((m) => `${m.alias}:${m.reason}`)).toEqual([
      "development:build",
      "production:build",
      "development:build",
      "production:deploy",
    ]);
    const listed = await catalog.deployments({ agentId: "checker" });
    expect(listed.find((d) => d.id === first)?.aliases).toEqual([]);
  });

  it("rollback goes back to what the alias named before, or to a named deployment", async () => {
    const catalog = createDeploymentCatalog(source.dir);
    const back = await catalog.rollback("checker", "production");
    expect(back.aliases.production).toBe(first);
    expect(back.history.at(-1)).toMatchObject({ reason: "rollback", previous: second });
    // Twice is an undo of the undo.
    expect((await catalog.rollback("checker", "production")).aliases.production).toBe(second);
    expect((await catalog.rollback("checker", "production", first)).aliases.production).toBe(first);
    await expect(
      catalog.rollback("checker", "production", "dep_00000000000000000000"),
    ).rejects.toMatchObject({ code: "not_found", details: { path: "to" } });
    await expect(catalog.rollback("nobody", "production")).rejects.toMatchObject({
      code: "not_found",
    });
  });

  it("a line cut short by a crash mid-append is ignored and does not swallow the next move", async () => {
    appendFileSync(join(out, "checker.aliases.jsonl"), '{"alias":"production","deploym');
    const catalog = createDeploymentCatalog(source.dir);
    const moved = await catalog.moveAlias("checker", "production", second);
    expect(moved.aliases.production).toBe(second);
    expect(readAliases(out, "checker").production).toBe(second);
  });
});

describe("uploads", () => {
  it("are checked, stored once and move the alias named; a second upload is a no-op", async () => {
    const built = await buildProject(source.dir);
    const deployment = built.deployments[0]!;
    const { manifest, bundle } = upload(join(deploymentsDir(source.dir), deployment.id));
    const catalog = createDeploymentCatalog(server, { now: clock("2026-02-01T00:00:00Z") });
    const stored = await catalog.upload(manifest, bundle, "development");
    expect(stored).toMatchObject({
      created: true,
      deployment: { id: deployment.id, agentId: "checker", createdAt: "2026-02-01T00:00:00.000Z" },
      agent: { aliases: { development: deployment.id, production: deployment.id } },
    });
    const again = await catalog.upload(manifest, bundle, "development");
    expect(again.created).toBe(false);
    // It runs where it landed: the server's resolver loads it.
    const agents = createDeploymentAgents(server);
    await expect(agents.load("checker", deployment.id)).resolves.toMatchObject({
      deploymentId: deployment.id,
    });
  });

  it("refuse a changed bundle, a changed manifest and malformed fields, naming the field", async () => {
    const built = await buildProject(source.dir);
    const id = built.deployments[0]!.id;
    const { manifest, bundle } = upload(join(deploymentsDir(source.dir), id));
    const catalog = createDeploymentCatalog(server);
    const tampered = Buffer.concat([bundle, Buffer.from("\nglobalThis.x = 1;\n")]);
    await expect(catalog.upload(manifest, tampered, "production")).rejects.toMatchObject({
      code: "deployment_invalid",
      details: { path: "manifest.bundle" },
    });
    const renamed = { ...manifest, tools: [] };
    await expect(catalog.upload(renamed, bundle, "production")).rejects.toMatchObject({
      code: "deployment_invalid",
      details: { path: "manifest.id" },
    });
    await expect(catalog.upload([], bundle, "production")).rejects.toMatchObject({
      details: { path: "manifest" },
    });
    await expect(
      catalog.upload({ ...manifest, agentId: "../x" }, bundle, "production"),
    ).rejects.toMatchObject({ details: { path: "manifest.agentId" } });
  });

  it("refuse a consistent deployment whose code fails the load-time check, and store nothing", async () => {
    // Digests that match, code that throws when imported: only running the check finds it.
    const bundle = Buffer.from('throw new Error("refused at load");\n');
    const content = deploymentContent("broken", [], undefined, bundle);
    const manifest = { id: deploymentId(content, bundle), createdAt: "", ...content };
    const catalog = createDeploymentCatalog(server);
    const refused = catalog.upload(manifest, bundle, "production");
    await expect(refused).rejects.toMatchObject({
      code: "deployment_invalid",
      details: { path: "bundle" },
    });
    await expect(refused).rejects.toThrow(/refused at load/);
    await expect(catalog.deployment(manifest.id)).rejects.toMatchObject({ code: "not_found" });
    expect((await catalog.agents()).map((a) => a.id)).toEqual(["checker"]);
  });
});
