// A deployment on disk: `<project>/.opencomputer/deployments/<id>/{deployment.json,bundle.mjs}`.
// The id is a digest of what the deployment is (the bundle and the manifest without its id and
// time), so building unchanged source names the existing deployment and writes nothing, while
// any change gets a new directory beside the old one, which stays as it was.

import { createHash, randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { McpServerDeclaration, ScheduleDeclaration, ToolKind } from "@opencomputer/agent";
import type { ConnectionDeclaration, MemoryDeclaration } from "@opencomputer/agent/internal";
import { canonicalJson } from "@opencomputer/runtime";
import type { JsonValue } from "./literal.ts";
import type { SkillRecord } from "./skills.ts";

/** A tool as a deployment records it. */
export interface DeploymentTool {
  name: string;
  description: string;
  /** The input schema as loaded, or null when the tool declares none. */
  input: JsonValue | null;
  /** For the result tool, the schema copied from source; for others, as loaded. */
  output?: JsonValue;
  result: boolean;
  kind: ToolKind;
}

export interface ResultToolRecord {
  name: string;
  /** `sha256:<hex>` of the canonical JSON of `output`, as result records carry it. */
  schemaDigest: string;
}

export const MANIFEST_FILE = "deployment.json";
export const BUNDLE_FILE = "bundle.mjs";

export interface Deployment {
  /** `dep_` + 20 hex digits of the content digest. */
  id: string;
  agentId: string;
  /** When this content was first built; unchanged by later builds of the same source. */
  createdAt: string;
  tools: DeploymentTool[];
  resultTool?: ResultToolRecord;
  /** The connections agent code may call through the egress gateway (absent when none). */
  connections?: ConnectionDeclaration[];
  /** The memory resources sessions of this deployment may bind (absent when none). */
  memory?: MemoryDeclaration[];
  /**
   * The built-in tool ids every render gets without useTool; absent means the runtime's default
   * (`shell`). `[]` when project.ts says `shell: false`.
   */
  defaultTools?: string[];
  /** The agent's schedules (absent when none). */
  schedules?: ScheduleDeclaration[];
  /** The MCP servers the runtime may connect to for this agent (absent when none). */
  mcpServers?: McpServerDeclaration[];
  /** Skills packaged under `skills/<name>/` beside the bundle (absent when none). */
  skills?: SkillRecord[];
  bundle: { file: string; digest: string };
}

/** The directory of the packaged skills, beside the bundle. */
export const SKILLS_DIR = "skills";

/** What a deployment carries beside its code (each only when present). */
export interface DeploymentExtras {
  mcpServers?: McpServerDeclaration[];
  skills?: SkillRecord[];
}

/** What the id is computed over: the manifest without `id` and `createdAt`. */
export type DeploymentContent = Omit<Deployment, "id" | "createdAt">;

export function deploymentContent(
  agentId: string,
  tools: DeploymentTool[],
  resultTool: ResultToolRecord | undefined,
  bundle: Uint8Array,
  connections: ConnectionDeclaration[] = [],
  memory: MemoryDeclaration[] = [],
  defaultTools?: string[],
  schedules: ScheduleDeclaration[] = [],
  extras: DeploymentExtras = {},
): DeploymentContent {
  return {
    agentId,
    tools,
    ...(resultTool ? { resultTool } : {}),
    // Only when present, so deployments without connections keep their ids.
    ...(connections.length > 0 ? { connections } : {}),
    ...(memory.length > 0 ? { memory } : {}),
    ...(defaultTools ? { defaultTools } : {}),
    ...(schedules.length > 0 ? { schedules } : {}),
    ...(extras.mcpServers?.length ? { mcpServers: extras.mcpServers } : {}),
    ...(extras.skills?.length ? { skills: extras.skills } : {}),
    bundle: { file: BUNDLE_FILE, digest: `sha256:${sha256(bundle)}` },
  };
}

export function deploymentId(content: DeploymentContent, bundle: Uint8Array): string {
  const hash = createHash("sha256");
  // Version tag first, so a future change of what is hashed cannot collide with today's ids.
  hash.update("opencomputer.deployment.v1\0");
  hash.update(content.agentId).update("\0");
  hash.update(bundle).update("\0");
  hash.update(canonicalJson(content));
  return `dep_${hash.digest("hex").slice(0, 20)}`;
}

export function sha256(bytes: Uint8Array | string): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/**
 * Writes the deployment unless one with its id exists (then returns that one, with its original
 * `createdAt`). Files go to a temporary directory renamed into place, so a reader never sees a
 * half-written deployment and two builds racing write one.
 */
export function writeDeployment(
  dir: string,
  content: DeploymentContent,
  bundle: Uint8Array,
  now: Date,
  /** Files beside the bundle (the skills), by path relative to the deployment's directory. */
  files: ReadonlyMap<string, Uint8Array> = new Map(),
): { deployment: Deployment; created: boolean } {
  const id = deploymentId(content, bundle);
  const target = join(dir, id);
  const existing = readDeployment(dir, id);
  if (existing) return { deployment: existing, created: false };
  const deployment: Deployment = {
    id,
    agentId: content.agentId,
    createdAt: now.toISOString(),
    tools: content.tools,
    ...(content.resultTool ? { resultTool: content.resultTool } : {}),
    ...(content.connections ? { connections: content.connections } : {}),
    ...(content.memory ? { memory: content.memory } : {}),
    ...(content.defaultTools ? { defaultTools: content.defaultTools } : {}),
    ...(content.schedules ? { schedules: content.schedules } : {}),
    ...(content.mcpServers ? { mcpServers: content.mcpServers } : {}),
    ...(content.skills ? { skills: content.skills } : {}),
    bundle: content.bundle,
  };
  mkdirSync(dir, { recursive: true });
  const temp = join(dir, `.tmp-${id}-${process.pid}-${randomBytes(4).toString("hex")}`);
  mkdirSync(temp);
  try {
    writeFileSync(join(temp, BUNDLE_FILE), bundle);
    for (const [path, bytes] of files) {
      mkdirSync(dirname(join(temp, path)), { recursive: true });
      writeFileSync(join(temp, path), bytes);
    }
    writeFileSync(join(temp, MANIFEST_FILE), `${JSON.stringify(deployment, null, 2)}\n`);
    renameSync(temp, target);
  } catch (error) {
    rmSync(temp, { recursive: true, force: true });
    const raced = readDeployment(dir, id);
    if (raced) return { deployment: raced, created: false };
    throw error;
  }
  return { deployment, created: true };
}

export function readDeployment(dir: string, id: string): Deployment | undefined {
  const file = join(dir, id, MANIFEST_FILE);
  if (!existsSync(file)) return undefined;
  return JSON.parse(readFileSync(file, "utf8")) as Deployment;
}
