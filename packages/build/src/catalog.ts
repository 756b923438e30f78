// What `GET /agents` and `GET /deployments` show: read from the deployments directory on each
// call (builds by `opencomputer dev`'s watcher or another process appear without a restart).

import { existsSync, readdirSync } from "node:fs";
import { OpenComputerError } from "@opencomputer/agent";
import { type Deployment, readCurrent, readDeployment } from "./deployment.ts";
import { deploymentsDir } from "./project.ts";

const DEPLOYMENT_ID = /^dep_[0-9a-f]{20}$/;

/** A deployment as the API lists it: no bundle path, tools without their schemas. */
export interface DeploymentSummary {
  id: string;
  agentId: string;
  createdAt: string;
  tools: { name: string; description: string; kind: string; result: boolean }[];
  resultTool: string | null;
}

export interface AgentSummary {
  id: string;
  /** Both aliases name the latest build today (`development` and `production`). */
  aliases: { development: string; production: string };
  deployment: DeploymentSummary;
}

export interface DeploymentCatalog {
  agents(): Promise<AgentSummary[]>;
  /** Newest first. */
  deployments(filter?: { agentId?: string }): Promise<DeploymentSummary[]>;
  /** The whole manifest, tool schemas included; `not_found` for an unknown id. */
  deployment(id: string): Promise<Deployment>;
}

function summary(d: Deployment): DeploymentSummary {
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
  };
}

export function createDeploymentCatalog(projectDir: string): DeploymentCatalog {
  const dir = deploymentsDir(projectDir);
  const entries = () => (existsSync(dir) ? readdirSync(dir) : []);
  const all = (): Deployment[] =>
    entries()
      .filter((name) => DEPLOYMENT_ID.test(name))
      .map((id) => readDeployment(dir, id))
      .filter((d): d is Deployment => d !== undefined)
      .sort((a, b) => b.createdAt.localeCompare(a.createdAt) || b.id.localeCompare(a.id));

  return {
    async agents() {
      const agents: AgentSummary[] = [];
      for (const name of entries().sort()) {
        if (!name.endsWith(".current")) continue;
        const agentId = name.slice(0, -".current".length);
        const id = readCurrent(dir, agentId);
        const deployment = id === undefined ? undefined : readDeployment(dir, id);
        if (!deployment) continue;
        agents.push({
          id: agentId,
          aliases: { development: deployment.id, production: deployment.id },
          deployment: summary(deployment),
        });
      }
      return agents;
    },
    async deployments(filter = {}) {
      return all()
        .filter((d) => filter.agentId === undefined || d.agentId === filter.agentId)
        .map(summary);
    },
    async deployment(id) {
      const found = DEPLOYMENT_ID.test(id) ? readDeployment(dir, id) : undefined;
      if (!found) throw new OpenComputerError("not_found", `No deployment ${id}`, { path: "id" });
      return found;
    },
  };
}
