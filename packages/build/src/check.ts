// `opencomputer doctor`: every check of a build without writing a deployment. Three phases:
// read the sources (imports, defineTool calls, result-tool rules, output schemas), load the
// modules in a child process (input schemas, descriptions, kinds), and bundle each agent.
// The child starts first, loading and bundling then run side by side after the static phase.
// Loading runs project code, so the child is confined by the options' isolation (isolation.ts).

import { performance } from "node:perf_hooks";
import type { McpServerDeclaration, ScheduleDeclaration } from "@opencomputer/agent";
import { jsonDigest } from "@opencomputer/runtime";
import { bundleAgent } from "./bundle.ts";
import type { DeploymentTool, ResultToolRecord } from "./deployment.ts";
import { type BuildError, type BuildWarning, sortErrors } from "./errors.ts";
import type { ModuleGraph } from "./graph.ts";
import { type BuildIsolation, buildIsolation } from "./isolation.ts";
import type { LoadedTool } from "./load-protocol.ts";
import { DEFAULT_LOAD_TIMEOUT_MS, type LoadResult, startLoader } from "./load-tools.ts";
import { type AgentMcp, agentMcp } from "./mcp-servers.ts";
import { loadProjectMemory } from "./memory.ts";
import { errorAt, type ParsedModule, positionOf } from "./parse.ts";
import { openProject, type Project, relativePath } from "./project.ts";
import type { ProjectDeclaration } from "./project-file.ts";
import type { References } from "./references.ts";
import { responseReturnWarnings } from "./response-returns.ts";
import { readSchedules } from "./schedules.ts";
import { type PackagedSkill, readSkills, type SkillRecord } from "./skills.ts";
import { type AgentState, readSources, type Sources } from "./sources.ts";
import { strictSchemaWarnings } from "./strict-warnings.ts";
import type { StaticTool } from "./tools.ts";

export interface CheckOptions {
  /** How long loading the tool modules may take, in milliseconds (default 10 000). */
  loadTimeoutMs?: number;
  /**
   * How the project's code is confined while it loads; default `buildIsolation(dir)`: the
   * bubblewrap sandbox where possible, else a plain process with a minimal environment.
   */
  isolation?: BuildIsolation;
  /**
   * The model that will replace every agent's choice, as OPENCOMPUTER_MODEL does at run time
   * (default: that variable here); it decides which agents get OpenAI strict-mode warnings.
   */
  modelOverride?: string;
}

export interface AgentReport {
  agentId: string;
  /** Project-relative path of agent.ts. */
  agentFile: string;
  /** Project-relative paths of every project module the agent loads. */
  modules: string[];
  /** Sorted by name. Complete only when the check found no errors. */
  tools: DeploymentTool[];
  resultTool?: ResultToolRecord;
  /** Its schedules (`schedules/<id>.ts`), sorted by id. */
  schedules: ScheduleDeclaration[];
  /** The MCP servers its modules define (absent when none). */
  mcpServers?: McpServerDeclaration[];
  /** Its packaged skills (absent when none). */
  skills?: SkillRecord[];
}

export interface BuildTimings {
  /** Time inside the TypeScript parser. */
  parseMs: number;
  /** The whole static phase (reading files, parsing, analysis). */
  analyzeMs: number;
  /** Loading the modules in the child process (runs alongside bundling). */
  loadMs: number;
  bundleMs: number;
  writeMs: number;
  totalMs: number;
}

export interface CheckResult {
  agents: AgentReport[];
  errors: BuildError[];
  /** Problems that do not fail the build (e.g. a tool schema OpenAI's strict mode refuses). */
  warnings: BuildWarning[];
  timings: BuildTimings;
  /** What confined the project's code while it loaded (print it when `kind` is not `sandbox`). */
  isolation: Pick<BuildIsolation, "kind" | "description">;
}

/** The check's result plus each agent's bundle, for the build to write. */
export interface Analysis extends CheckResult {
  project: Project;
  /** What `opencomputer/project.ts` declares; absent when the project has none. */
  declaration?: ProjectDeclaration;
  bundles: Map<string, Uint8Array>;
  mcp: Map<string, AgentMcp>;
  skills: Map<string, PackagedSkill[]>;
  /** What each agent's code names by id (checked against its connections by the build). */
  references: Map<string, References>;
}

export async function checkProject(dir: string, options: CheckOptions = {}): Promise<CheckResult> {
  // Memory modules load in their own child, beside the tools' check (memory.ts).
  const loadingMemory = loadProjectMemory(dir, options.isolation ?? buildIsolation(dir));
  const { agents, errors, warnings, timings, isolation } = await analyzeProject(dir, options);
  const memory = await loadingMemory;
  return { agents, errors: [...errors, ...memory.errors], warnings, timings, isolation };
}

export async function analyzeProject(dir: string, options: CheckOptions = {}): Promise<Analysis> {
  const started = performance.now();
  const project = openProject(dir);
  const isolation = options.isolation ?? buildIsolation(project.root);
  // Started before anything else: Node's start-up overlaps the static phase.
  const loader = startLoader(project, isolation, options.loadTimeoutMs ?? DEFAULT_LOAD_TIMEOUT_MS);
  let sources: Sources;
  try {
    sources = readSources(project);
  } catch (error) {
    loader.cancel();
    throw error;
  }
  const { graph, states, toolsByModule } = sources;
  const schedules = readSchedules(
    project,
    states.map((s) => s.entry),
  );
  const errors = [...sources.errors, ...schedules.errors];
  const analyzeMs = performance.now() - started;
  // What loading says about a module whose source is already refused repeats that refusal
  // (defineTool throws for the same reason), so it is not reported again.
  const refused = new Set(errors.map((e) => e.file));

  // Phase 2 and 3, side by side: load every module once; bundle the agents that look sound.
  const allModules = unique(states.flatMap((s) => s.modules.map((m) => m.file)));
  const loadStarted = performance.now();
  let loadMs = 0;
  const loading = loader.load(allModules).then((result) => {
    loadMs = performance.now() - loadStarted;
    return result;
  });
  const bundleStarted = performance.now();
  const bundles = new Map<string, Uint8Array>();
  const bundling = Promise.all(
    states
      .filter((s) => s.staticErrors === 0)
      .map(async (s) => {
        const result = await bundleAgent(project, {
          agentId: s.entry.agentId,
          agentFile: s.entry.file,
          modules: s.modules.map((m) => m.file),
        });
        errors.push(...result.errors);
        if (result.code) bundles.set(s.entry.agentId, result.code);
      }),
  );
  // Synchronous type checking, placed while the loader process and esbuild work.
  const responseWarnings = responseReturnWarnings(states);
  await bundling;
  const bundleMs = performance.now() - bundleStarted;
  const loaded = await loading;
  errors.push(...loadErrors(project, loaded, refused));
  errors.push(...unrecognisedTools(graph, loaded, toolsByModule, refused));

  const mcp = new Map<string, AgentMcp>();
  const skills = new Map<string, PackagedSkill[]>();
  for (const state of states) {
    const agentId = state.entry.agentId;
    mcp.set(agentId, agentMcp(project, state, loaded, errors));
    skills.set(agentId, readSkills(project, agentId, errors));
  }
  const agents = states.map((s) => {
    const agentId = s.entry.agentId;
    const agent: AgentReport = {
      ...report(project, s, loaded),
      schedules: schedules.byAgent.get(agentId) ?? [],
    };
    const servers = mcp.get(agentId)?.servers ?? [];
    if (servers.length > 0) agent.mcpServers = servers;
    const packaged = skills.get(agentId) ?? [];
    if (packaged.length > 0) agent.skills = packaged.map((k) => k.record);
    return agent;
  });
  const totalMs = performance.now() - started;
  return {
    project,
    ...(sources.declaration ? { declaration: sources.declaration } : {}),
    agents,
    errors: sortErrors(errors),
    warnings: sortErrors([
      ...strictSchemaWarnings(
        states,
        loaded,
        "modelOverride" in options ? options.modelOverride : process.env.OPENCOMPUTER_MODEL,
      ),
      ...responseWarnings,
    ]),
    bundles,
    mcp,
    skills,
    references: new Map(states.map((s) => [s.entry.agentId, s.references])),
    timings: { parseMs: graph.parseMs, analyzeMs, loadMs, bundleMs, writeMs: 0, totalMs },
    isolation: { kind: isolation.kind, description: isolation.description },
  };
}

function unique(files: string[]): string[] {
  return [...new Set(files)];
}

/** Load failures worth reporting: not those of modules whose source is already refused. */
function loadErrors(project: Project, loaded: LoadResult, refused: Set<string>): BuildError[] {
  const errors: BuildError[] = [];
  for (const [module, error] of loaded.failed) {
    if (error && !refused.has(relativePath(project, module))) errors.push(error);
  }
  if (loaded.fatal) errors.push(loaded.fatal);
  return errors;
}

/**
 * Source and module must agree on the tools: one the module exports that no defineTool() call
 * of its own made has an output the build never saw, and one made by a call that the loaded
 * module does not export could not be recorded.
 */
function unrecognisedTools(
  graph: ModuleGraph,
  loaded: LoadResult,
  toolsByModule: Map<ParsedModule, StaticTool[]>,
  refused: Set<string>,
): BuildError[] {
  const errors: BuildError[] = [];
  for (const [file, tools] of loaded.loaded) {
    const mod = graph.module(file);
    if (refused.has(mod.rel)) continue;
    const statics = toolsByModule.get(mod) ?? [];
    const names = new Set(statics.map((t) => t.name));
    const loadedNames = new Set(tools.map((t) => t.name));
    for (const tool of statics) {
      if (tool.name === undefined || loadedNames.has(tool.name)) continue;
      errors.push(
        errorAt(
          mod,
          tool.call,
          "tool_not_exported",
          `${mod.rel} defines the tool "${tool.name}" here, but the loaded module does not export it; export the const that defineTool() initialises`,
        ),
      );
    }
    for (const tool of tools) {
      if (names.has(tool.name)) continue;
      const exportName = tool.exports[0]!;
      const exported = mod.exports.get(exportName);
      errors.push({
        code: "tool_not_static",
        message: `${mod.rel} exports the tool "${tool.name}" as \`${exportName}\`, but no defineTool() call in ${mod.rel} makes it; define each tool with defineTool({...}) imported from @opencomputer/agent in the module that exports it`,
        file: mod.rel,
        ...(exported ? positionOf(mod, exported.node) : { line: 1, column: 1 }),
      });
    }
  }
  return errors;
}

function report(
  project: Project,
  state: AgentState,
  loaded: LoadResult,
): Omit<AgentReport, "schedules"> {
  const tools: DeploymentTool[] = [];
  let resultTool: ResultToolRecord | undefined;
  for (const tool of state.tools) {
    const found = tool.name ? findLoaded(loaded, tool.mod.file, tool.name) : undefined;
    if (!found || !tool.name) continue;
    const record: DeploymentTool = {
      name: tool.name,
      description: found.description,
      input: found.input ?? null,
      result: tool.result,
      kind: found.kind,
    };
    const output = tool.result ? state.outputs.get(tool) : found.output;
    if (output !== undefined) record.output = output;
    if (tool.result && output !== undefined) {
      resultTool = { name: tool.name, schemaDigest: jsonDigest(output) };
    }
    tools.push(record);
  }
  tools.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return {
    agentId: state.entry.agentId,
    agentFile: relativePath(project, state.entry.file),
    modules: state.modules.map((m) => m.rel),
    tools,
    ...(resultTool ? { resultTool } : {}),
  };
}

function findLoaded(loaded: LoadResult, file: string, name: string): LoadedTool | undefined {
  return loaded.loaded.get(file)?.find((t) => t.name === name);
}
