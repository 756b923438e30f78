// `opencomputer build`: the checks of `doctor`, then one deployment per agent. A build with any
// error writes nothing, so the deployments on disk always come from a project that passed.

import { performance } from "node:perf_hooks";
import type { ConnectionDeclaration } from "@opencomputer/agent/internal";
import { type Alias, type AliasMove, recordDeployment } from "./aliases.ts";
import { analyzeProject, type BuildTimings, type CheckOptions } from "./check.ts";
import { loadProjectConnections } from "./connections.ts";
import { type Deployment, deploymentContent, SKILLS_DIR, writeDeployment } from "./deployment.ts";
import { type BuildError, type BuildWarning, sortErrors } from "./errors.ts";
import { type BuildIsolation, buildIsolation } from "./isolation.ts";
import { checkMcpConnections } from "./mcp-servers.ts";
import { loadProjectMemory } from "./memory.ts";
import { withMemoryConnections } from "./memory-connections.ts";
import { deploymentsDir } from "./project.ts";
import { connectionErrors, type References } from "./references.ts";

export interface BuildOptions extends CheckOptions {
  /** The clock for `createdAt` (tests). */
  now?: () => Date;
  /**
   * The alias this build moves (default `development`); an agent's first deployment sets both
   * (aliases.ts).
   */
  alias?: Alias;
  /** Recorded in the alias history: `build` (default) or `deploy`. */
  reason?: "build" | "deploy";
}

export interface BuildResult {
  /** One per agent, sorted by agent id; empty when there are errors. */
  deployments: Deployment[];
  errors: BuildError[];
  /** Reported whether or not the build succeeded; they never stop it. */
  warnings: BuildWarning[];
  /** Agent ids whose deployment this build created (the others were already on disk). */
  created: string[];
  /** The alias moves this build made. */
  moved: Array<AliasMove & { agentId: string }>;
  timings: BuildTimings;
  /** What confined the project's code while it loaded (print it when `kind` is not `sandbox`). */
  isolation: Pick<BuildIsolation, "kind" | "description">;
}

export async function buildProject(dir: string, options: BuildOptions = {}): Promise<BuildResult> {
  // One choice for both children that run project code.
  const isolation = options.isolation ?? buildIsolation(dir);
  // Connection modules load in their own child, beside the tools' check (connections.ts).
  const loadingConnections = loadProjectConnections(dir, isolation);
  const loadingMemory = loadProjectMemory(dir, isolation);
  const analysis = await analyzeProject(dir, { ...options, isolation });
  const { project, agents, warnings, bundles, timings } = analysis;
  const connections = await loadingConnections;
  const memory = await loadingMemory;
  const errors = [
    ...analysis.errors,
    ...connections.errors,
    ...memory.errors,
    ...unknownConnections(analysis.references, connections.byAgent),
  ];
  // MCP servers and HTTP memory name connections; the agent's connections include those too.
  const agentConnections = new Map<string, ConnectionDeclaration[]>();
  for (const agent of agents) {
    const mcp = analysis.mcp.get(agent.agentId);
    const declared = connections.byAgent.get(agent.agentId) ?? [];
    const withMcp = mcp ? checkMcpConnections(agent.agentId, mcp, declared, errors) : declared;
    const resources = memory.byAgent.get(agent.agentId);
    agentConnections.set(
      agent.agentId,
      resources ? withMemoryConnections(agent.agentId, resources, withMcp, errors) : withMcp,
    );
  }
  const confined = analysis.isolation;
  if (errors.length > 0) {
    return {
      deployments: [],
      errors: sortErrors(errors),
      warnings,
      created: [],
      moved: [],
      timings,
      isolation: confined,
    };
  }

  const started = performance.now();
  const now = (options.now ?? (() => new Date()))();
  const out = deploymentsDir(project.root);
  const deployments: Deployment[] = [];
  const created: string[] = [];
  const moved: BuildResult["moved"] = [];
  for (const agent of agents) {
    const bundle = bundles.get(agent.agentId);
    // No error and no bundle cannot happen: bundling either produced code or reported why not.
    if (!bundle) throw new Error(`internal: no bundle for agent "${agent.agentId}"`);
    const skills = analysis.skills.get(agent.agentId) ?? [];
    const content = deploymentContent(
      agent.agentId,
      agent.tools,
      agent.resultTool,
      bundle,
      agentConnections.get(agent.agentId),
      memory.byAgent.get(agent.agentId),
      // `shell: false` in project.ts: no built-in tool comes without useTool.
      analysis.declaration?.shell === false ? [] : undefined,
      agent.schedules,
      { mcpServers: agent.mcpServers, skills: skills.map((s) => s.record) },
    );
    const files = new Map<string, Uint8Array>();
    for (const skill of skills) {
      for (const [path, bytes] of skill.contents) {
        files.set(`${SKILLS_DIR}/${skill.record.name}/${path}`, bytes);
      }
    }
    const written = writeDeployment(out, content, bundle, now, files);
    const moves = recordDeployment(
      out,
      agent.agentId,
      options.alias ?? "development",
      written.deployment.id,
      options.reason ?? "build",
      now,
    );
    for (const move of moves) moved.push({ agentId: agent.agentId, ...move });
    deployments.push(written.deployment);
    if (written.created) created.push(agent.agentId);
  }
  const writeMs = performance.now() - started;
  return {
    deployments,
    errors,
    warnings,
    created,
    moved,
    timings: { ...timings, writeMs, totalMs: timings.totalMs + writeMs },
    isolation: confined,
  };
}

/** `connection("id")` calls whose id no connection of that agent declares. */
function unknownConnections(
  references: Map<string, References>,
  byAgent: Map<string, ConnectionDeclaration[]>,
): BuildError[] {
  const errors: BuildError[] = [];
  for (const [agentId, refs] of references) {
    const declared = (byAgent.get(agentId) ?? []).map((c) => c.id);
    errors.push(...connectionErrors(agentId, refs.connections, declared));
  }
  return errors;
}
