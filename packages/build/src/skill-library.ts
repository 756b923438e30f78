// The runtime's view of a deployment's skills (the SkillLibrary port): the manifest says which
// files exist and what they hold, so a path the manifest does not list is never opened (no
// `../` can reach past the skill) and a file edited after the build is refused by its digest.

import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { OpenComputerError } from "@opencomputer/agent";
import type { SkillLibrary } from "@opencomputer/runtime";
import { SKILLS_DIR } from "./deployment.ts";
import { SKILL_FILE, type SkillRecord, skillBody } from "./skills.ts";

export function deploymentSkills(
  deploymentDir: string,
  records: readonly SkillRecord[],
): SkillLibrary {
  const summaries = records.map((r) => ({
    name: r.name,
    description: r.description,
    files: r.files.filter((f) => f.path !== SKILL_FILE).map((f) => f.path),
  }));
  return {
    list: () => summaries,
    async read(skill, file) {
      const record = records.find((r) => r.name === skill);
      const path = file ?? SKILL_FILE;
      const entry = record?.files.find((f) => f.path === path);
      if (!record || !entry) return undefined;
      const bytes = await readFile(join(deploymentDir, SKILLS_DIR, skill, path));
      const digest = `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
      if (digest !== entry.digest) {
        throw new OpenComputerError(
          "deployment_invalid",
          `skill ${skill}: ${path} changed after the build (its digest no longer matches)`,
          { path: `skills/${skill}/${path}` },
        );
      }
      const text = bytes.toString("utf8");
      return { text: file === undefined ? skillBody(text) : text, bytes: bytes.length };
    },
  };
}
