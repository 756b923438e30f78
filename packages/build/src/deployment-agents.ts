// The runtime's AgentResolver over built deployments: `describe` pins an agent's current
// deployment, `load` imports its bundle once and refuses it (deployment_invalid) when the
// files changed since the build or the tools that load differ from what the build recorded.

import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { type AgentFunction, OpenComputerError } from "@opencomputer/agent";
import {
  AgentNotFoundError,
  type AgentResolver,
  type LoadedAgent,
  parseAgentRef,
} from "@opencomputer/runtime";
import {
  BUNDLE_FILE,
  type Deployment,
  deploymentContent,
  deploymentId,
  MANIFEST_FILE,
  readCurrent,
  readDeployment,
} from "./deployment.ts";
import { assertToolsMatch, type ToolModules } from "./load-check.ts";
import { deploymentsDir } from "./project.ts";

const DEPLOYMENT_ID = /^dep_[0-9a-f]{20}$/;

export function createDeploymentAgents(projectDir: string): AgentResolver {
  const dir = deploymentsDir(projectDir);
  const root = resolve(projectDir);
  // Deployments are immutable, so one load per deployment serves every session that pins it.
  const loads = new Map<string, Promise<LoadedAgent>>();

  return {
    async describe(agentRef) {
      const { agentId } = parseAgentRef(agentRef);
      // Read on every call, so sessions created after a new build pin the new deployment.
      const deploymentId = readCurrent(dir, agentId);
      if (!deploymentId) {
        throw new AgentNotFoundError(
          "agent_not_found",
          `No deployment of agent "${agentId}" in ${dir}: run \`opencomputer build\` in the project first`,
          { path: "agentId" },
        );
      }
      return { agentId, deploymentId };
    },
    load(agentId, id) {
      const key = `${agentId}\0${id}`;
      let promise = loads.get(key);
      if (!promise) {
        promise = loadDeployment(dir, root, agentId, id);
        // A failed load is not kept: the next attempt reads the files again.
        promise.catch(() => loads.delete(key));
        loads.set(key, promise);
      }
      return promise;
    },
  };
}

async function loadDeployment(
  dir: string,
  root: string,
  agentId: string,
  id: string,
): Promise<LoadedAgent> {
  const invalid = (message: string, details: Record<string, unknown> = {}) =>
    new OpenComputerError("deployment_invalid", `Deployment ${id}: ${message}`, {
      path: "deploymentId",
      ...details,
    });
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
  verifyContent(deployment, readFileSync(bundleFile), invalid);

  let mod: { agent?: unknown; toolModules?: ToolModules };
  try {
    mod = await import(pathToFileURL(bundleFile).href);
  } catch (error) {
    // The agent's own code threw while loading: nothing of it may run.
    throw invalid(`its bundle failed to load: ${(error as Error)?.message ?? String(error)}`);
  }
  if (typeof mod.agent !== "function") throw invalid("the bundle has no agent function");
  assertToolsMatch(deployment, mod.toolModules ?? {});
  return { agentId, deploymentId: id, projectDir: root, render: mod.agent as AgentFunction };
}

/** The id is a digest of the content: files edited after the build no longer match it. */
function verifyContent(
  deployment: Deployment,
  bundle: Uint8Array,
  invalid: (message: string) => Error,
): void {
  const content = deploymentContent(
    deployment.agentId,
    deployment.tools,
    deployment.resultTool,
    bundle,
  );
  if (deploymentId(content, bundle) !== deployment.id) {
    throw invalid("its files changed after the build (the content no longer matches its id)");
  }
}
