// What `GET /agents` and `GET /deployments` show, and the writes behind `opencomputer deploy`
// and `rollback`: read from the deployments directory on each call (builds by `opencomputer
// dev`'s watcher or another process appear without a restart).

import { existsSync, readdirSync } from "node:fs";
import { OpenComputerError } from "@opencomputer/agent";
import {
  type AgentAliases,
  type Alias,
  type AliasMove,
  aliasedAgents,
  isAlias,
  moveAlias,
  readAliases,
  recordDeployment,
  rollbackTarget,
} from "./aliases.ts";
import { type Deployment, readDeployment } from "./deployment.ts";
import { deploymentsDir } from "./project.ts";
import { acceptUpload, type UploadOptions } from "./upload.ts";

const DEPLOYMENT_ID = /^dep_[0-9a-f]{20}$/;

/** A deployment as the API lists it: no bundle path, tools without their schemas. */
export interface DeploymentSummary {
  id: string;
  agentId: string;
  createdAt: string;
  tools: { name: string; description: string; kind: string; result: boolean }[];
  resultTool: string | null;
  /** The aliases that name it now. */
  aliases: Alias[];
}

export interface AgentSummary {
  id: string;
  /** The deployment each alias names (null: not deployed under that alias yet). */
  aliases: { development: string | null; production: string | null };
  /** The deployment `<id>` alone resolves to: production's, else development's. */
  deployment: DeploymentSummary;
  /** Every alias move, oldest first. */
  history: AliasMove[];
}

export interface DeploymentCatalog {
  agents(): Promise<AgentSummary[]>;
  /** `not_found` for an agent with no deployment. */
  agent(id: string): Promise<AgentSummary>;
  /** Newest first. */
  deployments(filter?: { agentId?: string }): Promise<DeploymentSummary[]>;
  /** The whole manifest, tool schemas included; `not_found` for an unknown id. */
  deployment(id: string): Promise<Deployment>;
  /** Checks and stores an uploaded deployment, then moves `alias` to it. */
  upload(
    manifest: unknown,
    bundle: Uint8Array,
    alias: Alias,
    /** The skills' files, by path relative to the deployment's directory. */
    files?: ReadonlyMap<string, Uint8Array>,
  ): Promise<{ deployment: Deployment; created: boolean; agent: AgentSummary }>;
  /** Points an alias at one of the agent's deployments. */
  moveAlias(agentId: string, alias: Alias, deploymentId: string): Promise<AgentSummary>;
  /** Moves an alias back (to `to`, or to what it named before its latest move). */
  rollback(agentId: string, alias: Alias, to?: string): Promise<AgentSummary>;
}

export interface CatalogOptions extends UploadOptions {}

function summary(d: Deployment, aliases?: AgentAliases): DeploymentSummary {
  return {
    id: d.id,
    agentId: d.agentId,
    createdAt: d.createdAt,
    tools: d.tools.map((t) => ({
      name: t.name,
      description: t.description,
      kind: t.kind,
      result: t.result,
    })),
    resultTool: d.resultTool?.name ?? null,
    aliases: aliases
      ? (["development", "production"] as const).filter((a) => aliases[a] === d.id)
      : [],
  };
}

export function createDeploymentCatalog(
  projectDir: string,
  options: CatalogOptions = {},
): DeploymentCatalog {
  const dir = deploymentsDir(projectDir);
  const now = options.now ?? (() => new Date());
  const entries = () => (existsSync(dir) ? readdirSync(dir) : []);
  const all = (): Deployment[] =>
    entries()
      .filter((name) => DEPLOYMENT_ID.test(name))
      .map((id) => readDeployment(dir, id))
      .filter((d): d is Deployment => d !== undefined)
      .sort((a, b) => b.createdAt.localeCompare(a.createdAt) || b.id.localeCompare(a.id));

  const agentSummary = (agentId: string): AgentSummary | undefined => {
    const aliases = readAliases(dir, agentId);
    const id = aliases.production ?? aliases.development;
    const deployment = id === null ? undefined : readDeployment(dir, id);
    if (!deployment) return undefined;
    return {
      id: agentId,
      aliases: { development: aliases.development, production: aliases.production },
      deployment: summary(deployment, aliases),
      history: aliases.history,
    };
  };
  const mustAgent = (agentId: string): AgentSummary => {
    const found = agentSummary(agentId);
    if (!found) {
      throw new OpenComputerError("not_found", `No agent "${agentId}" is deployed here`, {
        path: "agentId",
      });
    }
    return found;
  };
  /** One of the agent's deployments, or why not. */
  const ownDeployment = (agentId: string, id: string, path: string): Deployment => {
    const found = DEPLOYMENT_ID.test(id) ? readDeployment(dir, id) : undefined;
    if (!found || found.agentId !== agentId) {
      throw new OpenComputerError(
        "not_found",
        `No deployment ${id} of agent "${agentId}" (see GET /deployments?agent=${agentId})`,
        { path },
      );
    }
    return found;
  };

  return {
    async agents() {
      return aliasedAgents(entries())
        .map(agentSummary)
        .filter((a): a is AgentSummary => a !== undefined);
    },
    async agent(id) {
      return mustAgent(id);
    },
    async deployments(filter = {}) {
      const aliasesOf = new Map<string, AgentAliases>();
      return all()
        .filter((d) => filter.agentId === undefined || d.agentId === filter.agentId)
        .map((d) => {
          let aliases = aliasesOf.get(d.agentId);
          if (!aliases) {
            aliases = readAliases(dir, d.agentId);
            aliasesOf.set(d.agentId, aliases);
          }
          return summary(d, aliases);
        });
    },
    async deployment(id) {
      const found = DEPLOYMENT_ID.test(id) ? readDeployment(dir, id) : undefined;
      if (!found) throw new OpenComputerError("not_found", `No deployment ${id}`, { path: "id" });
      return found;
    },
    async upload(manifest, bundle, alias, files) {
      const stored = await acceptUpload(projectDir, manifest, bundle, options, files);
      const { agentId, id } = stored.deployment;
      recordDeployment(dir, agentId, alias, id, "deploy", now());
      return { ...stored, agent: mustAgent(agentId) };
    },
    async moveAlias(agentId, alias, deploymentId) {
      checkAlias(alias);
      ownDeployment(agentId, deploymentId, "deploymentId");
      moveAlias(dir, agentId, alias, deploymentId, "deploy", now());
      return mustAgent(agentId);
    },
    async rollback(agentId, alias, to) {
      checkAlias(alias);
      mustAgent(agentId);
      const target = to ?? rollbackTarget(readAliases(dir, agentId), alias);
      ownDeployment(agentId, target, "to");
      moveAlias(dir, agentId, alias, target, "rollback", now());
      return mustAgent(agentId);
    },
  };
}

function checkAlias(alias: unknown): asserts alias is Alias {
  if (!isAlias(alias)) {
    throw new OpenComputerError(
      "invalid_input",
      `alias must be "development" or "production", got ${JSON.stringify(alias)}`,
      { path: "alias" },
    );
  }
}
