// The runtime's AgentResolver over built deployments: `describe` pins an agent's current
// deployment, `load` imports its bundle once and refuses it (deployment_invalid) when the
// files changed since the build or the tools that load differ from what the build recorded.
// `locate` does the same checks without running anything, for a worker process to import it.

import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import {
  AgentNotFoundError,
  type AgentResolver,
  type AgentResources,
  type LoadedAgent,
  parseAgentRef,
} from "@opencomputer/runtime";
import { siblingModule } from "@opencomputer/workers";
import { isAlias, readAliases } from "./aliases.ts";
import { readDeployment } from "./deployment.ts";
import { importDeployment, verifyDeployment } from "./deployment-load.ts";
import { deploymentsDir } from "./project.ts";
import { deploymentSkills } from "./skill-library.ts";

/** The module a worker imports to load a deployment (its `loadAgent`). */
const WORKER_LOADER = siblingModule(import.meta.url, "deployment-load");

export function createDeploymentAgents(projectDir: string): AgentResolver {
  const dir = deploymentsDir(projectDir);
  const root = resolve(projectDir);
  // Deployments are immutable, so one load per deployment serves every session that pins it.
  const loads = new Map<string, Promise<LoadedAgent>>();
  // Read once per deployment too: the turn loop asks for them at the start of every turn.
  const resources = new Map<string, AgentResources>();

  return {
    async describe(agentRef) {
      const { agentId, alias } = parseAgentRef(agentRef);
      // Read on every call, so sessions created after a deploy pin the new deployment.
      const aliases = readAliases(dir, agentId);
      const deploymentId = isAlias(alias) ? aliases[alias] : null;
      if (!deploymentId) {
        // API callers see this message: the agent and alias, not the server's directories.
        throw new AgentNotFoundError(
          "agent_not_found",
          aliases.history.length === 0 && !aliases.development
            ? `No deployment of agent "${agentId}" (alias ${alias}): run \`opencomputer build\` or \`opencomputer deploy\` in the project first`
            : `Agent "${agentId}" has no ${alias} deployment: run \`opencomputer deploy --alias ${alias}\``,
          { path: "agentId" },
        );
      }
      return { agentId, deploymentId };
    },
    async locate(agentId, id) {
      const { bundleFile, deployment } = verifyDeployment(dir, agentId, id);
      const deploymentDir = dirname(bundleFile);
      return {
        agentId,
        deploymentId: id,
        projectDir: root,
        ...(deployment.defaultTools ? { defaultTools: deployment.defaultTools } : {}),
        cwd: deploymentDir,
        loader: WORKER_LOADER,
        args: { dir, agentId, deploymentId: id },
        // The bundle holds the project's code; the SDK it imports resolves from the project.
        readPaths: [deploymentDir, ...projectModules(root)],
      };
    },
    async memory(agentId, id) {
      // The manifest's record of what the build loaded; the deployment's own check is `locate`'s.
      const deployment = readDeployment(dir, id);
      return deployment?.agentId === agentId ? (deployment.memory ?? []) : [];
    },
    async resources(agentId, id) {
      const key = `${agentId}\0${id}`;
      let found = resources.get(key);
      if (!found) {
        const { deployment, bundleFile } = verifyDeployment(dir, agentId, id);
        found = {
          mcpServers: deployment.mcpServers ?? [],
          ...(deployment.skills?.length
            ? { skills: deploymentSkills(dirname(bundleFile), deployment.skills) }
            : {}),
        };
        resources.set(key, found);
      }
      return found;
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

function projectModules(root: string): string[] {
  const dir = join(root, "node_modules");
  return existsSync(dir) ? [dir] : [];
}

async function loadDeployment(
  dir: string,
  root: string,
  agentId: string,
  id: string,
): Promise<LoadedAgent> {
  const verified = verifyDeployment(dir, agentId, id);
  const render = await importDeployment(verified);
  const { defaultTools } = verified.deployment;
  return {
    agentId,
    deploymentId: id,
    projectDir: root,
    render,
    ...(defaultTools ? { defaultTools } : {}),
  };
}
