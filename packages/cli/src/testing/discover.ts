// Where scenario tests live: `opencomputer/agents/<id>/tests/*.test.ts` and `*.json`, beside
// the agent they test. JSON files are read here; `.test.ts` modules are project code, so they are
// loaded in the build's sandboxed loader process (loadScenarioModules), which also runs their
// scoring functions later on.

import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { OpenComputerError } from "@opencomputer/agent";
import { loadScenarioModules, type ScenarioModules } from "@opencomputer/build";
import { listAgents } from "../project.ts";
import { checkScenario, invalid, type ScenarioSpec } from "./scenario.ts";

export interface Discovered {
  scenarios: ScenarioSpec[];
  /** Scoring for `.test.ts` scenarios: `file` is the spec's module path. */
  score(spec: ScenarioSpec, ref: number, text: string): Promise<number>;
  close(): void;
}

/** Every scenario of `agent` (or of every agent), in file order, filtered by name. */
export async function discoverScenarios(
  projectDir: string,
  agent: string | undefined,
  filter: string | undefined,
): Promise<Discovered> {
  const agents = listAgents(projectDir);
  if (agent !== undefined && !agents.includes(agent)) {
    throw new OpenComputerError(
      "test_agent_unknown",
      `No agent "${agent}" in ${join(projectDir, "opencomputer", "agents")} (agents: ${agents.join(", ") || "none"})`,
      { path: "agent" },
    );
  }
  const rel = (file: string) => relative(projectDir, file);
  const jsonFiles: Array<{ file: string; agentId: string }> = [];
  const moduleFiles: Array<{ file: string; agentId: string }> = [];
  for (const agentId of agent ? [agent] : agents) {
    const dir = join(projectDir, "opencomputer", "agents", agentId, "tests");
    if (!existsSync(dir)) continue;
    for (const name of readdirSync(dir).sort()) {
      if (name.endsWith(".json")) jsonFiles.push({ file: join(dir, name), agentId });
      else if (/\.test\.(ts|mts|js|mjs)$/.test(name))
        moduleFiles.push({ file: join(dir, name), agentId });
    }
  }
  const scenarios: ScenarioSpec[] = [];
  const specFile = new Map<ScenarioSpec, string>();
  for (const { file, agentId } of jsonFiles) {
    for (const [i, data] of readJson(file, rel(file)).entries()) {
      scenarios.push(checkScenario(data, { file: rel(file), agentId, path: `$[${i}]` }));
    }
  }
  let modules: ScenarioModules | undefined;
  if (moduleFiles.length > 0) {
    modules = await loadScenarioModules(
      projectDir,
      moduleFiles.map((m) => m.file),
    );
    for (const loaded of modules.loaded) {
      const agentId = moduleFiles.find((m) => m.file === loaded.file)!.agentId;
      if ("error" in loaded) {
        modules.close();
        throw new OpenComputerError(
          "test_file_invalid",
          `${rel(loaded.file)}: the module failed to load: ${loaded.error}`,
          { file: rel(loaded.file) },
        );
      }
      if (loaded.scenarios.length === 0) {
        modules.close();
        throw invalid(
          rel(loaded.file),
          "exports",
          "exports no scenario (export defineScenario({...}) from @opencomputer/agent/testing)",
        );
      }
      for (const { export: name, scenario } of loaded.scenarios) {
        const spec = checkScenario(scenario, { file: rel(loaded.file), agentId, path: name });
        specFile.set(spec, loaded.file);
        scenarios.push(spec);
      }
    }
  }
  const chosen = filter ? scenarios.filter((s) => s.name.includes(filter)) : scenarios;
  return {
    scenarios: chosen,
    score(spec, ref, text) {
      const file = specFile.get(spec);
      if (!modules || !file)
        return Promise.reject(new Error("this scenario has no scoring module"));
      return modules.score(file, ref, text);
    },
    close: () => modules?.close(),
  };
}

/** A JSON test file: one scenario, a list of them, or `{ "scenarios": [...] }`. */
function readJson(file: string, shown: string): unknown[] {
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(file, "utf8"));
  } catch (error) {
    throw invalid(shown, "$", `not valid JSON: ${(error as Error).message}`);
  }
  if (Array.isArray(data)) return data;
  if (
    typeof data === "object" &&
    data !== null &&
    Array.isArray((data as { scenarios?: unknown }).scenarios)
  )
    return (data as { scenarios: unknown[] }).scenarios;
  return [data];
}
