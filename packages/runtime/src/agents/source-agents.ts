import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { AgentFunction } from "@opencomputer/agent";
import { OpenComputerError } from "@opencomputer/agent";
import type { AgentResolver, LoadedAgent } from "../ports/agent-resolver.ts";
import { MODULE_LOADER } from "./module-loader.ts";

const AGENT_ID = /^[a-zA-Z0-9_-]{1,64}$/;

export class AgentNotFoundError extends OpenComputerError {}

/** `<agentId>@<alias>` → agentId; a bare id means production. */
export function parseAgentRef(ref: string): { agentId: string; alias: string } {
  const at = ref.indexOf("@");
  const agentId = at === -1 ? ref : ref.slice(0, at);
  const alias = at === -1 ? "production" : ref.slice(at + 1);
  if (!AGENT_ID.test(agentId)) {
    throw new AgentNotFoundError("invalid_agent", `Agent id "${agentId}" must match ${AGENT_ID}`, {
      path: "agentId",
    });
  }
  if (alias !== "production" && alias !== "development") {
    throw new AgentNotFoundError(
      "invalid_agent",
      `Alias "${alias}" must be development or production`,
      {
        path: "agentId",
      },
    );
  }
  return { agentId, alias };
}

/**
 * Loads agents straight from `opencomputer/agents/<id>/agent.ts` with the host's TypeScript
 * loader. The deployment id is a digest of the agent directory's sources, so a changed agent
 * gets a new id; the built deployments of `opencomputer build` replace this loader.
 */
export function createSourceAgents(projectDir: string): AgentResolver {
  const root = resolve(projectDir);
  const loaded = new Map<string, Promise<LoadedAgent>>();
  // Node caches imported modules, so this process runs an agent's sources as first loaded: the
  // deployment id is computed once, from those sources, and stays true for the process's life.
  const deploymentIds = new Map<string, string>();

  // The message reaches API callers: it names the agent and the project-relative file, never
  // where the project lives on the server.
  function agentDir(agentId: string, alias?: string): string {
    const dir = join(root, "opencomputer", "agents", agentId);
    if (!existsSync(join(dir, "agent.ts"))) {
      throw new AgentNotFoundError(
        "agent_not_found",
        `No agent "${agentId}"${alias ? ` (alias ${alias})` : ""}: the project has no opencomputer/agents/${agentId}/agent.ts`,
        { path: "agentId" },
      );
    }
    return dir;
  }

  return {
    async describe(agentRef) {
      const { agentId, alias } = parseAgentRef(agentRef);
      let deploymentId = deploymentIds.get(agentId);
      if (!deploymentId) {
        deploymentId = `src_${digestDir(agentDir(agentId, alias))}`;
        deploymentIds.set(agentId, deploymentId);
      }
      return { agentId, deploymentId };
    },
    async locate(agentId, deploymentId) {
      const dir = agentDir(agentId);
      return {
        agentId,
        deploymentId,
        projectDir: root,
        cwd: root,
        loader: MODULE_LOADER,
        args: { file: join(dir, "agent.ts"), exportName: "default" },
        // Sources import from anywhere in the project (shared code, its node_modules); the
        // runtime's own files there (store, keys, computers) stay hidden.
        readPaths: [root],
        hidePaths: [join(root, ".opencomputer")],
      };
    },
    load(agentId, deploymentId) {
      const key = `${agentId}\0${deploymentId}`;
      let promise = loaded.get(key);
      if (!promise) {
        promise = (async () => {
          const file = join(agentDir(agentId), "agent.ts");
          const mod = (await import(pathToFileURL(file).href)) as { default?: unknown };
          if (typeof mod.default !== "function") {
            throw new OpenComputerError(
              "deployment_invalid",
              `${file} must export a default agent function`,
              {
                path: file,
              },
            );
          }
          return { agentId, deploymentId, projectDir: root, render: mod.default as AgentFunction };
        })();
        promise.catch(() => loaded.delete(key));
        loaded.set(key, promise);
      }
      return promise;
    },
  };
}

function digestDir(dir: string): string {
  const hash = createHash("sha256");
  const walk = (d: string) => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (/\.(ts|tsx|js|mjs|json)$/.test(name))
        hash.update(p.slice(dir.length)).update(readFileSync(p));
    }
  };
  walk(dir);
  return hash.digest("hex").slice(0, 16);
}
