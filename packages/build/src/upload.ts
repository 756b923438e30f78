// A deployment uploaded to a server (`opencomputer deploy`): checked exactly as the server would
// check its own build before anything runs it, then stored like one. Checks, in order: the
// manifest's shape, the bundle's digest and the id (a digest of both, so nothing can be
// swapped), and the load-time check in a sandboxed child (the bundle imports and defines the
// tools the manifest lists). Uploads are content-addressed: one the server has is a no-op.

import { randomBytes } from "node:crypto";
import { mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { OpenComputerError } from "@opencomputer/agent";
import { siblingModule } from "@opencomputer/workers";
import {
  BUNDLE_FILE,
  type Deployment,
  deploymentContent,
  deploymentId,
  MANIFEST_FILE,
  readDeployment,
  sha256,
} from "./deployment.ts";
import { type BuildIsolation, buildIsolation } from "./isolation.ts";
import { startLoadProcess } from "./load-process.ts";
import { deploymentsDir, openProject, type Project } from "./project.ts";
import { checkUploadedSkills } from "./upload-skills.ts";

const CHILD_SCRIPT = siblingModule(import.meta.url, "upload-child");
const DEPLOYMENT_ID = /^dep_[0-9a-f]{20}$/;
const AGENT_ID = /^[a-zA-Z0-9_-]{1,64}$/;
/** Larger than any agent bundle we have seen by two orders of magnitude. */
export const MAX_BUNDLE_BYTES = 16 * 1024 * 1024;

export interface UploadOptions {
  isolation?: BuildIsolation;
  now?: () => Date;
  /** How long the load-time check may take (default 30 s). */
  timeoutMs?: number;
}

const invalid = (message: string, path: string) =>
  new OpenComputerError("deployment_invalid", message, { path });

/** Stores an uploaded deployment after checking it; `created: false` when it was already here. */
export async function acceptUpload(
  projectDir: string,
  manifest: unknown,
  bundle: Uint8Array,
  options: UploadOptions = {},
  /** Files beside the bundle (the skills), by path relative to the deployment's directory. */
  files: ReadonlyMap<string, Uint8Array> = new Map(),
): Promise<{ deployment: Deployment; created: boolean }> {
  const claimed = checkManifest(manifest, bundle, files);
  const project = openProject(projectDir);
  const dir = deploymentsDir(project.root);
  const existing = readDeployment(dir, claimed.id);
  if (existing) return { deployment: existing, created: false };
  const deployment: Deployment = {
    ...claimed,
    createdAt: (options.now ?? (() => new Date()))().toISOString(),
  };
  // Staged inside the deployments directory (so the bundle resolves the SDK from the project's
  // packages, as it will when it runs), renamed into place only once the check passed.
  const staging = join(dir, `.upload-${deployment.id}-${randomBytes(4).toString("hex")}`);
  mkdirSync(join(staging, deployment.id), { recursive: true });
  try {
    writeFileSync(join(staging, deployment.id, BUNDLE_FILE), bundle);
    // Paths were checked against the manifest's skill records: relative, no "." or "..".
    for (const [path, bytes] of files) {
      mkdirSync(dirname(join(staging, deployment.id, path)), { recursive: true });
      writeFileSync(join(staging, deployment.id, path), bytes);
    }
    writeFileSync(
      join(staging, deployment.id, MANIFEST_FILE),
      `${JSON.stringify(deployment, null, 2)}\n`,
    );
    const isolation = options.isolation ?? buildIsolation(project.root);
    const failure = await loadCheck(project, isolation, staging, deployment, options.timeoutMs);
    if (failure) throw invalid(failure, "bundle");
    try {
      renameSync(join(staging, deployment.id), join(dir, deployment.id));
    } catch (error) {
      // Another upload of the same content won the race: same id, same content.
      const raced = readDeployment(dir, deployment.id);
      if (raced) return { deployment: raced, created: false };
      throw error;
    }
    return { deployment, created: true };
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

/** The manifest as a deployment without `createdAt`, or `deployment_invalid` naming the field. */
function checkManifest(
  value: unknown,
  bundle: Uint8Array,
  files: ReadonlyMap<string, Uint8Array>,
): Omit<Deployment, "createdAt"> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw invalid("The manifest must be a JSON object (deployment.json)", "manifest");
  }
  const m = value as Partial<Deployment>;
  if (typeof m.id !== "string" || !DEPLOYMENT_ID.test(m.id)) {
    throw invalid("manifest.id must be a deployment id (dep_ and 20 hex digits)", "manifest.id");
  }
  if (typeof m.agentId !== "string" || !AGENT_ID.test(m.agentId)) {
    throw invalid(`manifest.agentId must match ${AGENT_ID}`, "manifest.agentId");
  }
  if (!Array.isArray(m.tools)) throw invalid("manifest.tools must be an array", "manifest.tools");
  if (m.connections !== undefined && !Array.isArray(m.connections)) {
    throw invalid("manifest.connections must be an array", "manifest.connections");
  }
  if (m.memory !== undefined && !Array.isArray(m.memory)) {
    throw invalid("manifest.memory must be an array", "manifest.memory");
  }
  if (
    m.defaultTools !== undefined &&
    !(Array.isArray(m.defaultTools) && m.defaultTools.every((id) => typeof id === "string"))
  ) {
    throw invalid("manifest.defaultTools must be an array of tool ids", "manifest.defaultTools");
  }
  if (bundle.byteLength === 0) throw invalid("The bundle is empty", "bundle");
  if (bundle.byteLength > MAX_BUNDLE_BYTES) {
    throw invalid(`The bundle is larger than ${MAX_BUNDLE_BYTES} bytes`, "bundle");
  }
  if (m.bundle?.file !== BUNDLE_FILE || m.bundle.digest !== `sha256:${sha256(bundle)}`) {
    throw invalid(
      "manifest.bundle does not describe the uploaded bundle (file or digest differs)",
      "manifest.bundle",
    );
  }
  checkMcpServers(m.mcpServers);
  const skills = checkUploadedSkills(m.skills, files);
  const content = deploymentContent(
    m.agentId,
    m.tools,
    m.resultTool,
    bundle,
    m.connections,
    m.memory,
    m.defaultTools,
    m.schedules,
    { mcpServers: m.mcpServers, ...(skills ? { skills } : {}) },
  );
  if (deploymentId(content, bundle) !== m.id) {
    throw invalid(
      `manifest.id ${m.id} is not the digest of this content: the manifest or the bundle was changed after the build`,
      "manifest.id",
    );
  }
  return { id: m.id, ...content };
}

function checkMcpServers(servers: unknown): void {
  if (servers === undefined) return;
  const ok =
    Array.isArray(servers) &&
    servers.every(
      (s) =>
        typeof s === "object" &&
        s !== null &&
        typeof s.id === "string" &&
        typeof s.url === "string" &&
        (s.connection === undefined || typeof s.connection === "string"),
    );
  if (!ok) {
    throw invalid(
      "manifest.mcpServers must be an array of { id, url, connection? }",
      "manifest.mcpServers",
    );
  }
}

/** Runs the load-time check in a confined child; the failure message, or null when it passed. */
function loadCheck(
  project: Project,
  isolation: BuildIsolation,
  staging: string,
  deployment: Omit<Deployment, "createdAt">,
  timeoutMs = 30_000,
): Promise<string | null> {
  return new Promise((resolve) => {
    const started = startLoadProcess(
      project,
      isolation,
      CHILD_SCRIPT,
      [staging, deployment.agentId, deployment.id],
      ["ignore", "ignore", "pipe", "ipc"],
      staging,
    );
    let stderr = "";
    let settled = false;
    const settle = (answer: string | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      started.stop();
      resolve(answer);
    };
    const lost = () =>
      settle(
        `the load-time check did not answer${stderr ? `: ${stderr.trim()}` : ` within ${timeoutMs} ms`}`,
      );
    started.child.stderr?.on("data", (chunk: Buffer) => {
      stderr = (stderr + chunk.toString("utf8")).slice(-2000);
    });
    started.child.on("message", (message) => {
      const answer = message as { ok: boolean; message?: string };
      settle(answer.ok ? null : (answer.message ?? "the load-time check failed"));
    });
    started.child.on("error", (error) => {
      stderr ||= error.message;
      lost();
    });
    started.child.on("exit", lost);
    const timer = setTimeout(lost, timeoutMs);
  });
}
