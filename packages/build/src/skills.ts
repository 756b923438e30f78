// Skills: `opencomputer/agents/<id>/skills/<name>/SKILL.md` (YAML frontmatter `name` and
// `description`, then the instructions) and the files beside it are packaged into the agent's
// deployment. The build reads every file once (the bytes it checks are the bytes it writes),
// records each file's size and digest in the manifest, and refuses what it cannot package
// faithfully: a missing SKILL.md or field, a name that is not the directory's, a symbolic link
// (it could point outside the skill) or any other non-regular file, and sizes past the limits.

import { createHash } from "node:crypto";
import { existsSync, lstatSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parse as parseYaml } from "yaml";
import type { BuildError } from "./errors.ts";
import { type Project, relativePath } from "./project.ts";

export const SKILL_FILE = "SKILL.md";
export const SKILL_NAME_PATTERN = /^[a-z0-9][a-z0-9-]{0,63}$/;
export const SKILL_LIMITS = {
  descriptionChars: 1024,
  fileBytes: 1024 * 1024,
  skillBytes: 8 * 1024 * 1024,
  filesPerSkill: 256,
  skillsPerAgent: 64,
} as const;

/** A packaged file as the manifest records it; `path` is relative to the skill's directory. */
export interface SkillFileRecord {
  path: string;
  bytes: number;
  /** `sha256:<hex>` of the file's bytes. */
  digest: string;
}

export interface SkillRecord {
  name: string;
  description: string;
  /** SKILL.md first, then the other files sorted by path. */
  files: SkillFileRecord[];
}

/** A skill read for packaging: its record and the bytes of each file. */
export interface PackagedSkill {
  record: SkillRecord;
  contents: Map<string, Buffer>;
}

export function readSkills(
  project: Project,
  agentId: string,
  errors: BuildError[],
): PackagedSkill[] {
  const dir = join(project.agentsDir, agentId, "skills");
  if (!existsSync(dir)) return [];
  const skills: PackagedSkill[] = [];
  const at = (file: string, line = 1) => ({ file: relativePath(project, file), line, column: 1 });
  if (!lstatSync(dir).isDirectory()) {
    errors.push({ code: "skill_invalid", message: "skills/ must be a directory", ...at(dir) });
    return [];
  }
  const entries = readdirSync(dir, { withFileTypes: true }).sort((a, b) =>
    a.name < b.name ? -1 : 1,
  );
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (!entry.isDirectory()) {
      errors.push({
        code: entry.isSymbolicLink() ? "skill_file_outside" : "skill_invalid",
        message: `skills/${entry.name}: skills/ holds one directory per skill (skills/<name>/SKILL.md)${entry.isSymbolicLink() ? "; a symbolic link is not packaged" : ""}`,
        ...at(path),
      });
      continue;
    }
    const skill = readSkill(path, entry.name, errors, at);
    if (skill) skills.push(skill);
  }
  if (skills.length > SKILL_LIMITS.skillsPerAgent) {
    errors.push({
      code: "skill_too_large",
      message: `Agent "${agentId}" has ${skills.length} skills; the limit is ${SKILL_LIMITS.skillsPerAgent}`,
      ...at(dir),
    });
  }
  return skills;
}

type At = (file: string, line?: number) => Pick<BuildError, "file" | "line" | "column">;

function readSkill(
  dir: string,
  name: string,
  errors: BuildError[],
  at: At,
): PackagedSkill | undefined {
  const before = errors.length;
  const contents = new Map<string, Buffer>();
  collectFiles(dir, "", contents, errors, at);
  const skillMd = contents.get(SKILL_FILE);
  if (!skillMd) {
    if (errors.length === before) {
      errors.push({
        code: "skill_missing_file",
        message: `skills/${name} has no ${SKILL_FILE}; a skill is a directory with ${SKILL_FILE} (frontmatter name and description, then the instructions)`,
        ...at(dir),
      });
    }
    return undefined;
  }
  const mdFile = join(dir, SKILL_FILE);
  const front = frontmatter(skillMd.toString("utf8"));
  if (typeof front === "string") {
    errors.push({
      code: "skill_frontmatter_invalid",
      message: `skills/${name}/${SKILL_FILE}: ${front}`,
      ...at(mdFile),
    });
    return undefined;
  }
  const problems: string[] = [];
  if (typeof front.name !== "string" || front.name === "") problems.push('"name" is missing');
  else if (front.name !== name) {
    problems.push(
      `"name" is ${JSON.stringify(front.name)} but the directory is skills/${name}; they must be the same`,
    );
  } else if (!SKILL_NAME_PATTERN.test(name)) {
    problems.push(
      `"name" must be lower-case letters, digits and "-" (at most 64); got ${JSON.stringify(name)}`,
    );
  }
  if (typeof front.description !== "string" || front.description.trim() === "") {
    problems.push('"description" is missing: say what the skill does and when to use it');
  } else if (front.description.length > SKILL_LIMITS.descriptionChars) {
    problems.push(`"description" is longer than ${SKILL_LIMITS.descriptionChars} characters`);
  }
  if (problems.length > 0) {
    for (const problem of problems) {
      errors.push({
        code: "skill_frontmatter_invalid",
        message: `skills/${name}/${SKILL_FILE}: ${problem}`,
        ...at(mdFile),
      });
    }
    return undefined;
  }
  let total = 0;
  for (const bytes of contents.values()) total += bytes.length;
  if (total > SKILL_LIMITS.skillBytes || contents.size > SKILL_LIMITS.filesPerSkill) {
    errors.push({
      code: "skill_too_large",
      message: `skills/${name} has ${contents.size} files of ${total} bytes; the limits are ${SKILL_LIMITS.filesPerSkill} files and ${SKILL_LIMITS.skillBytes} bytes`,
      ...at(dir),
    });
  }
  if (errors.length > before) return undefined;
  const paths = [...contents.keys()].filter((p) => p !== SKILL_FILE).sort();
  const files = [SKILL_FILE, ...paths].map((path) => {
    const bytes = contents.get(path)!;
    return {
      path,
      bytes: bytes.length,
      digest: `sha256:${createHash("sha256").update(bytes).digest("hex")}`,
    };
  });
  return { record: { name, description: (front.description as string).trim(), files }, contents };
}

function collectFiles(
  dir: string,
  prefix: string,
  out: Map<string, Buffer>,
  errors: BuildError[],
  at: At,
) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    const rel = prefix ? `${prefix}/${entry.name}` : entry.name;
    // lstat, not stat: a link is judged as a link, never by what it points to.
    const stat = lstatSync(path);
    if (stat.isSymbolicLink()) {
      errors.push({
        code: "skill_file_outside",
        message: `${rel} in skill directory ${dir} is a symbolic link; skills are packaged as plain files inside their directory, so copy the file in instead`,
        ...at(path),
      });
    } else if (stat.isDirectory()) {
      collectFiles(path, rel, out, errors, at);
    } else if (!stat.isFile()) {
      errors.push({
        code: "skill_file_outside",
        message: `${rel} is not a regular file`,
        ...at(path),
      });
    } else if (stat.size > SKILL_LIMITS.fileBytes) {
      errors.push({
        code: "skill_too_large",
        message: `${rel} is ${stat.size} bytes; a skill file may have at most ${SKILL_LIMITS.fileBytes}`,
        ...at(path),
      });
    } else {
      out.set(rel, readFileSync(path));
    }
  }
}

/** The frontmatter's fields, or what is wrong with it. */
export function frontmatter(text: string): Record<string, unknown> | string {
  const match = /^---\r?\n([\s\S]*?)\r?\n---(?:\r?\n|$)/.exec(text.replace(/^\uFEFF/, ""));
  if (!match) return "must start with a frontmatter block (--- name: ... description: ... ---)";
  let parsed: unknown;
  try {
    parsed = parseYaml(match[1]!);
  } catch (error) {
    return `the frontmatter is not valid YAML: ${(error as Error).message.split("\n")[0]}`;
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    return "the frontmatter must be a mapping with name and description";
  }
  return parsed as Record<string, unknown>;
}

/** SKILL.md without its frontmatter: what the model reads when it loads the skill. */
export function skillBody(text: string): string {
  return text
    .replace(/^\uFEFF/, "")
    .replace(/^---\r?\n[\s\S]*?\r?\n---(?:\r?\n|$)/, "")
    .replace(/^\s+/, "");
}
