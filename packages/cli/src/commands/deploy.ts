// `opencomputer deploy`: doctor and build locally, upload each agent's immutable deployment to
// the server (skipped when the server has it: deployments are content-addressed), and move the
// alias there. `--watch` deploys development again on every change of the sources.

import { readFileSync, watch } from "node:fs";
import { join, resolve } from "node:path";
import { OpenComputerError } from "@opencomputer/agent";
import {
  type Alias,
  buildProject,
  type Deployment,
  deploymentsDir,
  formatErrors,
  formatWarnings,
  isAlias,
  SKILLS_DIR,
} from "@opencomputer/build";
import { json, noExtra, out, parse } from "../args.ts";
import { ApiClient, seg } from "../client.ts";

export const DEPLOY_USAGE = `opencomputer deploy [--dir DIR] [--alias development|production] [--watch] [--json]
  e.g.  opencomputer deploy                      (development)
        opencomputer deploy --alias production
        opencomputer deploy --watch              (development, again on every change)`;

interface Deployed {
  agentId: string;
  deploymentId: string;
  alias: Alias;
  uploaded: boolean;
}

export async function deployCommand(argv: string[]): Promise<number> {
  const options = {
    dir: { type: "string" },
    alias: { type: "string" },
    watch: { type: "boolean" },
    json: { type: "boolean" },
  } as const;
  const { values, positionals } = parse(argv, options, DEPLOY_USAGE);
  noExtra(positionals, 0, DEPLOY_USAGE);
  const alias = values.alias ?? "development";
  if (!isAlias(alias)) {
    throw new OpenComputerError(
      "usage",
      `--alias must be development or production, got "${alias}"`,
    );
  }
  if (values.watch && alias !== "development") {
    throw new OpenComputerError(
      "usage",
      "--watch deploys development only; production moves on an explicit deploy",
    );
  }
  const dir = resolve(values.dir ?? ".");
  const api = ApiClient.resolve(dir);
  const once = () => deployOnce(api, dir, alias, values.json ?? false);
  const code = await once();
  if (!values.watch) return code;
  return watchAndDeploy(dir, once);
}

async function deployOnce(api: ApiClient, dir: string, alias: Alias, asJson: boolean) {
  const built = await buildProject(dir, { alias, reason: "deploy" });
  if (built.warnings.length > 0) process.stderr.write(`${formatWarnings(built.warnings)}\n`);
  if (built.errors.length > 0) {
    if (asJson) json({ type: "deploy.failed", errors: built.errors });
    else process.stderr.write(`${formatErrors(built.errors)}\ndeploy: nothing was uploaded\n`);
    return 1;
  }
  for (const deployment of built.deployments) {
    const result = await deployOne(api, dir, deployment, alias);
    if (asJson) json({ type: "deployed", ...result });
    else {
      const how = result.uploaded ? "uploaded" : "already on the server";
      out(`${result.agentId}@${alias} → ${result.deploymentId} (${how}) on ${api.url}`);
    }
  }
  return 0;
}

async function deployOne(
  api: ApiClient,
  dir: string,
  deployment: Deployment,
  alias: Alias,
): Promise<Deployed> {
  const { id, agentId } = deployment;
  const base = { agentId, deploymentId: id, alias };
  if (await api.find(`/deployments/${seg(id)}`)) {
    await api.post(`/agents/${seg(agentId)}/aliases/${alias}`, { deploymentId: id });
    return { ...base, uploaded: false };
  }
  const files = join(deploymentsDir(dir), id);
  const manifest = JSON.parse(readFileSync(join(files, "deployment.json"), "utf8")) as unknown;
  const bundle = readFileSync(join(files, deployment.bundle.file)).toString("base64");
  await api.post("/deployments", { manifest, bundle, alias, files: skillFiles(files, deployment) });
  return { ...base, uploaded: true };
}

/** The deployment's skill files, by path relative to its directory, in base64. */
function skillFiles(dir: string, deployment: Deployment): Record<string, string> {
  const out: Record<string, string> = {};
  for (const skill of deployment.skills ?? []) {
    for (const file of skill.files) {
      const path = `${SKILLS_DIR}/${skill.name}/${file.path}`;
      out[path] = readFileSync(join(dir, path)).toString("base64");
    }
  }
  return out;
}

async function watchAndDeploy(dir: string, once: () => Promise<number>): Promise<number> {
  out("Watching opencomputer/ for changes (Ctrl-C to stop)");
  let timer: NodeJS.Timeout | undefined;
  let running = Promise.resolve(0);
  const watcher = watch(join(dir, "opencomputer"), { recursive: true }, () => {
    clearTimeout(timer);
    // One deploy at a time: a change during a deploy starts the next one after it.
    timer = setTimeout(() => {
      running = running.then(once).catch((error: unknown) => {
        process.stderr.write(`deploy failed: ${(error as Error).message}\n`);
        return 1;
      });
    }, 200);
  });
  await new Promise<void>((done) => {
    process.once("SIGINT", done);
    process.once("SIGTERM", done);
  });
  watcher.close();
  await running;
  return 0;
}
