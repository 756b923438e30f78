// A deployment with skills uploaded to a server: the skill files travel with the manifest and
// bundle, are checked against the manifest's records (size, digest, SKILL.md's frontmatter, no
// extra file, safe paths) and land beside the bundle, where the runtime reads them.

import { mkdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { BUNDLE_FILE, MANIFEST_FILE, SKILLS_DIR } from "../src/deployment.ts";
import { buildProject, createDeploymentCatalog, deploymentsDir } from "../src/index.ts";
import type { SkillRecord } from "../src/skills.ts";
import { copyFixture } from "./helpers.ts";

const OUTPUT = fileURLToPath(new URL("../test-output", import.meta.url));
const source = copyFixture("capabilities");
const server = join(OUTPUT, `skills-server-${process.pid}-${Math.random().toString(36).slice(2)}`);
mkdirSync(server, { recursive: true });
afterAll(() => {
  source.remove();
  rmSync(server, { recursive: true, force: true });
});

async function builtWriter() {
  const built = await buildProject(source.dir);
  expect(built.errors).toEqual([]);
  const deployment = built.deployments.find((d) => d.agentId === "writer")!;
  const dir = join(deploymentsDir(source.dir), deployment.id);
  const manifest = JSON.parse(readFileSync(join(dir, MANIFEST_FILE), "utf8")) as {
    skills: SkillRecord[];
  } & Record<string, unknown>;
  const files = new Map<string, Uint8Array>();
  for (const skill of manifest.skills) {
    for (const file of skill.files) {
      const path = `${SKILLS_DIR}/${skill.name}/${file.path}`;
      files.set(path, readFileSync(join(dir, path)));
    }
  }
  return { id: deployment.id, manifest, bundle: readFileSync(join(dir, BUNDLE_FILE)), files };
}

describe("uploading a deployment with skills", () => {
  it("stores the skill files beside the bundle, byte for byte", async () => {
    const { id, manifest, bundle, files } = await builtWriter();
    expect(files.size).toBe(3);
    const catalog = createDeploymentCatalog(server);
    const stored = await catalog.upload(manifest, bundle, "development", files);
    expect(stored.created).toBe(true);
    for (const [path, bytes] of files) {
      expect(readFileSync(join(deploymentsDir(server), id, path))).toEqual(Buffer.from(bytes));
    }
  });

  it("refuses missing, changed, extra and escaping files, naming the field", async () => {
    const { manifest, bundle, files } = await builtWriter();
    const catalog = createDeploymentCatalog(server);
    const refused = (m: unknown, f: Map<string, Uint8Array>) =>
      catalog.upload(m, bundle, "production", f);
    const skillMd = `${SKILLS_DIR}/release-notes/SKILL.md`;

    const missing = new Map(files);
    missing.delete(skillMd);
    await expect(refused(manifest, missing)).rejects.toMatchObject({
      code: "deployment_invalid",
      details: { path: "files" },
    });

    const changed = new Map(files);
    changed.set(skillMd, Buffer.concat([Buffer.from(files.get(skillMd)!), Buffer.from("\nx")]));
    await expect(refused(manifest, changed)).rejects.toMatchObject({ details: { path: "files" } });

    const extra = new Map(files);
    extra.set(`${SKILLS_DIR}/release-notes/payload.sh`, Buffer.from("#!/bin/sh\n"));
    await expect(refused(manifest, extra)).rejects.toMatchObject({ details: { path: "files" } });

    const skill = manifest.skills[0]!;
    const escaping = {
      ...manifest,
      skills: [{ ...skill, files: [skill.files[0], { ...skill.files[1], path: "../../x" }] }],
    };
    await expect(refused(escaping, files)).rejects.toMatchObject({
      details: { path: "manifest.skills[0].files[1]" },
    });

    // A record that says something its SKILL.md does not: refused even with matching digests.
    const renamed = { ...manifest, skills: [{ ...skill, description: "Something else." }] };
    await expect(refused(renamed, files)).rejects.toMatchObject({
      details: { path: "manifest.skills[0]" },
    });

    // Without the files at all, a deployment that records skills is refused.
    await expect(refused(manifest, new Map())).rejects.toMatchObject({
      details: { path: "files" },
    });
  });
});
