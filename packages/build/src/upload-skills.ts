// The skills of an uploaded deployment: the manifest's records and the files that came with
// them must match exactly (every recorded file present with its size and digest, nothing else),
// within the limits a local build applies, and each SKILL.md must say the name and description
// the record claims. The records are part of the deployment id's content, so a file changed
// after the build changes its digest and is refused.

import { createHash } from "node:crypto";
import { OpenComputerError } from "@opencomputer/agent";
import { SKILLS_DIR } from "./deployment.ts";
import {
  frontmatter,
  SKILL_FILE,
  SKILL_LIMITS,
  SKILL_NAME_PATTERN,
  type SkillFileRecord,
  type SkillRecord,
} from "./skills.ts";

const SEGMENT = /^[^/\\\0]{1,255}$/;

const invalid = (message: string, path: string) =>
  new OpenComputerError("deployment_invalid", message, { path });

/** The checked skill records (undefined when the manifest has none); throws naming the field. */
export function checkUploadedSkills(
  value: unknown,
  files: ReadonlyMap<string, Uint8Array>,
): SkillRecord[] | undefined {
  if (value === undefined) {
    if (files.size > 0)
      throw invalid("files were uploaded but manifest.skills lists none", "files");
    return undefined;
  }
  if (!Array.isArray(value)) throw invalid("manifest.skills must be an array", "manifest.skills");
  if (value.length > SKILL_LIMITS.skillsPerAgent) {
    throw invalid(
      `manifest.skills has ${value.length} skills; the limit is ${SKILL_LIMITS.skillsPerAgent}`,
      "manifest.skills",
    );
  }
  const expected = new Set<string>();
  const records = value.map((skill, i) =>
    checkSkill(skill, `manifest.skills[${i}]`, files, expected),
  );
  const names = new Set(records.map((r) => r.name));
  if (names.size !== records.length) {
    throw invalid("manifest.skills names one skill twice", "manifest.skills");
  }
  for (const path of files.keys()) {
    if (!expected.has(path)) {
      throw invalid(`files[${JSON.stringify(path)}] is not a file of manifest.skills`, "files");
    }
  }
  return records;
}

function checkSkill(
  value: unknown,
  at: string,
  files: ReadonlyMap<string, Uint8Array>,
  expected: Set<string>,
): SkillRecord {
  if (typeof value !== "object" || value === null) throw invalid(`${at} must be an object`, at);
  const s = value as Partial<SkillRecord>;
  if (typeof s.name !== "string" || !SKILL_NAME_PATTERN.test(s.name)) {
    throw invalid(
      `${at}.name must be a skill name (lower-case letters, digits, "-")`,
      `${at}.name`,
    );
  }
  if (typeof s.description !== "string" || s.description.length > SKILL_LIMITS.descriptionChars) {
    throw invalid(
      `${at}.description must be a string of at most ${SKILL_LIMITS.descriptionChars} characters`,
      `${at}.description`,
    );
  }
  if (
    !Array.isArray(s.files) ||
    s.files.length === 0 ||
    s.files.length > SKILL_LIMITS.filesPerSkill
  ) {
    throw invalid(`${at}.files must list 1 to ${SKILL_LIMITS.filesPerSkill} files`, `${at}.files`);
  }
  if ((s.files[0] as SkillFileRecord | undefined)?.path !== SKILL_FILE) {
    throw invalid(`${at}.files must start with ${SKILL_FILE}`, `${at}.files`);
  }
  let total = 0;
  const records = s.files.map((file, i) => {
    const where = `${at}.files[${i}]`;
    const record = checkFileRecord(file, where);
    const key = `${SKILLS_DIR}/${s.name}/${record.path}`;
    if (expected.has(key)) throw invalid(`${where}.path names a file twice`, `${where}.path`);
    expected.add(key);
    const bytes = files.get(key);
    if (!bytes) throw invalid(`files[${JSON.stringify(key)}] is missing (${where})`, "files");
    if (
      bytes.byteLength !== record.bytes ||
      `sha256:${createHash("sha256").update(bytes).digest("hex")}` !== record.digest
    ) {
      throw invalid(
        `files[${JSON.stringify(key)}] is not the file ${where} describes (size or digest differs)`,
        "files",
      );
    }
    total += bytes.byteLength;
    return record;
  });
  if (total > SKILL_LIMITS.skillBytes) {
    throw invalid(`${at} has ${total} bytes; the limit is ${SKILL_LIMITS.skillBytes}`, at);
  }
  const md = files.get(`${SKILLS_DIR}/${s.name}/${SKILL_FILE}`)!;
  const front = frontmatter(Buffer.from(md).toString("utf8"));
  if (
    typeof front === "string" ||
    front.name !== s.name ||
    typeof front.description !== "string" ||
    front.description.trim() !== s.description
  ) {
    throw invalid(`${at}: its ${SKILL_FILE} does not declare this name and description`, at);
  }
  return { name: s.name, description: s.description, files: records };
}

function checkFileRecord(value: unknown, where: string): SkillFileRecord {
  const f = value as Partial<SkillFileRecord> | null;
  if (
    typeof f !== "object" ||
    f === null ||
    typeof f.path !== "string" ||
    !f.path.split("/").every((seg) => SEGMENT.test(seg) && seg !== "." && seg !== "..") ||
    !Number.isSafeInteger(f.bytes) ||
    (f.bytes as number) < 0 ||
    (f.bytes as number) > SKILL_LIMITS.fileBytes ||
    typeof f.digest !== "string" ||
    !/^sha256:[0-9a-f]{64}$/.test(f.digest)
  ) {
    throw invalid(
      `${where} must be { path (relative, no "." or ".." segments), bytes (at most ${SKILL_LIMITS.fileBytes}), digest ("sha256:<hex>") }`,
      where,
    );
  }
  return { path: f.path, bytes: f.bytes as number, digest: f.digest };
}
