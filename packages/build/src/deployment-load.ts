// Loading one built deployment, in two halves: `verifyDeployment` reads the manifest and checks
// the bundle's content against its id without running any of it (the control plane does this);
// `importDeployment` runs the bundle and checks its tools against the manifest (wherever the
// agent's code runs: the runtime's process, or a worker that imports this file as its loader).

import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { type AgentFunction, OpenComputerError } from "@opencomputer/agent";
import {
  BUNDLE_FILE,
  type Deployment,
  deploymentContent,
  deploymentId,
  MANIFEST_FILE,
  readDeployment,
} from "./deployment.ts";
import { assertToolsMatch, type ToolModules } from "./load-check.ts";

const DEPLOYMENT_ID = /^dep_[0-9a-f]{20}$/;

export interface VerifiedDeployment {
  deployment: Deployment;
  bundleFile: string;
}

function invalidOf(id: string) {
  return (message: string, details: Record<string, unknown> = {}) =>
    new OpenComputerError("deployment_invalid", `Deployment ${id}: ${message}`, {
      path: "deploymentId",
      ...details,
    });
}

export function verifyDeployment(dir: string, agentId: string, id: string): VerifiedDeployment {
  const invalid = invalidOf(id);
  if (!DEPLOYMENT_ID.test(id)) throw invalid("not a deployment id");
  let deployment: Deployment | undefined;
  try {
    deployment = readDeployment(dir, id);
  } catch (error) {
    throw invalid(`${MANIFEST_FILE} cannot be read: ${(error as Error).message}`);
  }
  if (!deployment) throw invalid(`not found in ${dir}`);
  if (deployment.agentId !== agentId) {
    throw invalid(`belongs to agent "${deployment.agentId}", not "${agentId}"`);
  }
  const bundleFile = join(dir, id, BUNDLE_FILE);
  if (!existsSync(bundleFile)) throw invalid(`${BUNDLE_FILE} is missing`);
  // The id is a digest of the content: files edited after the build no longer match it.
  const bundle = readFileSync(bundleFile);
  const content = deploymentContent(
    deployment.agentId,
    deployment.tools,
    deployment.resultTool,
    bundle,
    deployment.connections,
    deployment.memory,
    deployment.defaultTools,
    deployment.schedules,
    { mcpServers: deployment.mcpServers, skills: deployment.skills },
  );
  if (deploymentId(content, bundle) !== deployment.id) {
    throw invalid("its files changed after the build (the content no longer matches its id)");
  }
  return { deployment, bundleFile };
}

export async function importDeployment(verified: VerifiedDeployment): Promise<AgentFunction> {
  const invalid = invalidOf(verified.deployment.id);
  let mod: { agent?: unknown; toolModules?: ToolModules };
  try {
    mod = await import(pathToFileURL(verified.bundleFile).href);
  } catch (error) {
    // The agent's own code threw while loading: nothing of it may run.
    throw invalid(`its bundle failed to load: ${(error as Error)?.message ?? String(error)}`);
  }
  if (typeof mod.agent !== "function") throw invalid("the bundle has no agent function");
  assertToolsMatch(verified.deployment, mod.toolModules ?? {});
  return mod.agent as AgentFunction;
}

export interface DeploymentLoaderArgs {
  dir: string;
  agentId: string;
  deploymentId: string;
}

/** The worker's loader (AgentLocation.loader): verifies again, then imports. */
export async function loadAgent(args: DeploymentLoaderArgs): Promise<AgentFunction> {
  return importDeployment(verifyDeployment(args.dir, args.agentId, args.deploymentId));
}
