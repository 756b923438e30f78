// The schedules of the deployments the aliases name, read from the deployments directory on
// every call, so a scheduler follows builds, deploys and rollbacks made by any process. Each
// entry says which environments (aliases) its deployment is current in: a schedule recurs in an
// environment only from the deployment that environment runs.
import { existsSync, readdirSync } from "node:fs";
import type { DeployedSchedule, ScheduleCatalog } from "@opencomputer/schedules";
import { ALIASES, aliasedAgents, readAliases } from "./aliases.ts";
import { readDeployment } from "./deployment.ts";
import { deploymentsDir } from "./project.ts";

export function createScheduleCatalog(projectDir: string): ScheduleCatalog {
  const dir = deploymentsDir(projectDir);
  return {
    async list() {
      if (!existsSync(dir)) return [];
      const out: DeployedSchedule[] = [];
      for (const agentId of aliasedAgents(readdirSync(dir))) {
        const aliases = readAliases(dir, agentId);
        const byDeployment = new Map<string, string[]>();
        for (const alias of ALIASES) {
          const id = aliases[alias];
          if (id !== null) byDeployment.set(id, [...(byDeployment.get(id) ?? []), alias]);
        }
        for (const [id, environments] of byDeployment) {
          for (const schedule of readDeployment(dir, id)?.schedules ?? []) {
            out.push({ agentId, deploymentId: id, environments, schedule });
          }
        }
      }
      return out;
    },
  };
}
