// The load-time check. The build copied each result tool's output schema from source without
// running code; the module that actually loads may still build a different tool (a schema
// changed at load, a `result` flag that differs). Such a deployment "fails to load": the turn
// fails with `deployment_invalid` naming the tool, and none of its code runs.

import { OpenComputerError, type Tool } from "@opencomputer/agent";
import { isTool } from "@opencomputer/agent/internal";
import { canonicalJson } from "@opencomputer/runtime";
import type { Deployment } from "./deployment.ts";

/** Namespaces of the bundled project modules, by project-relative path. */
export type ToolModules = Record<string, Record<string, unknown>>;

export interface Mismatch {
  tool: string;
  module?: string;
  problem: string;
}

/** Every way the loaded tools differ from what the deployment recorded (empty when they agree). */
export function compareTools(deployment: Deployment, toolModules: ToolModules): Mismatch[] {
  const recorded = new Map(deployment.tools.map((t) => [t.name, t]));
  const mismatches: Mismatch[] = [];
  const present = new Set<string>();
  const checked = new Set<Tool>();
  for (const module of Object.keys(toolModules).sort()) {
    for (const value of Object.values(toolModules[module] ?? {})) {
      if (!isTool(value) || checked.has(value)) continue;
      checked.add(value);
      present.add(value.name);
      const record = recorded.get(value.name);
      if (!record) {
        mismatches.push({
          tool: value.name,
          module,
          problem: "is exported by the bundle but not recorded in the deployment",
        });
        continue;
      }
      if (record.result !== value.result) {
        mismatches.push({
          tool: value.name,
          module,
          problem: `declares result: ${value.result}, but the deployment recorded result: ${record.result}`,
        });
      }
      if (canonicalJson(record.output ?? null) !== canonicalJson(value.output ?? null)) {
        mismatches.push({
          tool: value.name,
          module,
          problem:
            "has an output schema that differs from the one the deployment recorded from its source (was the schema changed while the module loaded?)",
        });
      }
    }
  }
  for (const record of deployment.tools) {
    if (!present.has(record.name)) {
      mismatches.push({
        tool: record.name,
        problem: `is recorded in the deployment${record.result ? " as its result tool" : ""} but missing from the bundle`,
      });
    }
  }
  return mismatches;
}

/** Throws `deployment_invalid`, naming the tool, when the loaded tools differ from the record. */
export function assertToolsMatch(deployment: Deployment, toolModules: ToolModules): void {
  const mismatches = compareTools(deployment, toolModules);
  const first = mismatches[0];
  if (!first) return;
  const lines = mismatches.map(
    (m) => `tool "${m.tool}"${m.module ? ` (${m.module})` : ""} ${m.problem}`,
  );
  throw new OpenComputerError(
    "deployment_invalid",
    `Deployment ${deployment.id} of agent "${deployment.agentId}" failed to load: ${lines.join("; ")}`,
    {
      path: first.module ?? first.tool,
      tool: first.tool,
      tools: [...new Set(mismatches.map((m) => m.tool))],
    },
  );
}
