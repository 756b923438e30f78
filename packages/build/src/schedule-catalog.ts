// The schedules of each agent's current deployment, read from the deployments directory on every
// call, so a scheduler follows builds made by `opencomputer dev`'s watcher or another process.
import { existsSync, readdirSync } from "node:fs";
import type { DeployedSchedule, ScheduleCatalog } from "@opencomputer/schedules";
import { readCurrent, readDeployment } from "./deployment.ts";
import { deploymentsDir } from "./project.ts";

export function createScheduleCatalog(projectDir: string): ScheduleCatalog {
  const dir = deploymentsDir(projectDir);
  return {
    async list() {
      if (!existsSync(dir)) return [];
      const out: DeployedSchedule[] = [];
      for (const name of readdirSync(dir).sort()) {
        if (!name.endsWith(".current")) continue;
        const agentId = name.slice(0, -".current".length);
        const id = readCurrent(dir, agentId);
        const deployment = id === undefined ? undefined : readDeployment(dir, id);
        for (const schedule of deployment?.schedules ?? []) {
          out.push({ agentId, deploymentId: deployment!.id, schedule });
        }
      }
      return out;
    },
  };
}
