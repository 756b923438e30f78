// `opencomputer doctor`: every check of a build without writing a deployment. Three phases:
// read the sources (imports, defineTool calls, result-tool rules, output schemas), load the
// modules in a child process (input schemas, descriptions, kinds), and bundle each agent.
// Loading and bundling run at the same time; both only after the static phase, which is cheap.

import { performance } from "node:perf_hooks";
import type { ToolKind } from "@opencomputer/agent";
import { jsonDigest } from "@opencomputer/runtime";
import { bundleAgent } from "./bundle.ts";
import { type BuildError, sortErrors } from "./errors.ts";
import { ModuleGraph } from "./graph.ts";
import type { JsonValue } from "./literal.ts";
import type { LoadedTool } from "./load-protocol.ts";
import { DEFAULT_LOAD_TIMEOUT_MS, type LoadResult, loadModules } from "./load-tools.ts";
import { extractOutput } from "./output.ts";
import { errorAt, type ParsedModule, positionOf } from "./parse.ts";
import { type AgentEntry, findAgents, openProject, type Project, relativePath } from "./project.ts";
import { findTools, type StaticTool } from "./tools.ts";

export interface CheckOptions {
  /** How long loading the tool modules may take, in milliseconds (default 10 000). */
  loadTimeoutMs?: number;
}

/** A tool as a deployment records it. */
export interface DeploymentTool {
  name: string;
  description: string;
  /** The input schema as loaded, or null when the tool declares none. */
  input: JsonValue | null;
  /** For the result tool, the schema copied from source; for others, as loaded. */
  output?: JsonValue;
  result: boolean;
  kind: ToolKind;
}

export interface ResultToolRecord {
  name: string;
  /** `sha256:<hex>` of the canonical JSON of `output`, as result records carry it. */
  schemaDigest: string;
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
  timings: BuildTimings;
}

/** The check's result plus each agent's bundle, for the build to write. */
export interface Analysis extends CheckResult {
  project: Project;
  bundles: Map<string, Uint8Array>;
}

interface AgentState {
  entry: AgentEntry;
  modules: ParsedModule[];
  tools: StaticTool[];
  outputs: Map<StaticTool, JsonValue>;
  staticErrors: number;
}

export async function checkProject(dir: string, options: CheckOptions = {}): Promise<CheckResult> {
  const { agents, errors, timings } = await analyzeProject(dir, options);
  return { agents, errors, timings };
}

export async function analyzeProject(dir: string, options: CheckOptions = {}): Promise<Analysis> {
  const started = performance.now();
  const project = openProject(dir);
  const graph = new ModuleGraph(project);
  const errors: BuildError[] = [];
  const found = findAgents(project);
  errors.push(...found.errors);

  // Phase 1: sources.
  const toolsByModule = new Map<ParsedModule, StaticTool[]>();
  const moduleTools = (mod: ParsedModule): StaticTool[] => {
    let tools = toolsByModule.get(mod);
    if (!tools) {
      const result = findTools(mod);
      tools = result.tools;
      toolsByModule.set(mod, tools);
      errors.push(...mod.syntaxErrors, ...result.errors);
    }
    return tools;
  };
  const states: AgentState[] = found.agents.map((entry) => {
    const before = errors.length;
    const reachable = graph.reachable(entry.file);
    errors.push(...reachable.errors);
    const modules = reachable.modules.map((file) => graph.module(file));
    const tools = modules.flatMap(moduleTools);
    const state: AgentState = { entry, modules, tools, outputs: new Map(), staticErrors: 0 };
    errors.push(...agentRules(graph, state));
    state.staticErrors = errors.length - before;
    return state;
  });
  const analyzeMs = performance.now() - started;
  // What loading says about a module whose source is already refused repeats that refusal
  // (defineTool throws for the same reason), so it is not reported again.
  const refused = new Set(errors.map((e) => e.file));

  // Phase 2 and 3, side by side: load every module once; bundle the agents that look sound.
  const allModules = unique(states.flatMap((s) => s.modules.map((m) => m.file)));
  const loadStarted = performance.now();
  let loadMs = 0;
  const loading = loadModules(
    project,
    allModules,
    options.loadTimeoutMs ?? DEFAULT_LOAD_TIMEOUT_MS,
  ).then((result) => {
    loadMs = performance.now() - loadStarted;
    return result;
  });
  const bundleStarted = performance.now();
  const bundles = new Map<string, Uint8Array>();
  await Promise.all(
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
  const bundleMs = performance.now() - bundleStarted;
  const loaded = await loading;
  errors.push(...loadErrors(project, loaded, refused));
  errors.push(...unrecognisedTools(graph, loaded, toolsByModule, refused));

  const agents = states.map((s) => report(project, s, loaded));
  const totalMs = performance.now() - started;
  return {
    project,
    agents,
    errors: sortErrors(errors),
    bundles,
    timings: { parseMs: graph.parseMs, analyzeMs, loadMs, bundleMs, writeMs: 0, totalMs },
  };
}

/** The rules that concern an agent's tools together, and its result tool's schema. */
function agentRules(graph: ModuleGraph, state: AgentState): BuildError[] {
  const errors: BuildError[] = [];
  const agentModule = graph.module(state.entry.file);
  const agentId = state.entry.agentId;
  if (!agentModule.exports.has("default")) {
    errors.push({
      code: "agent_no_default_export",
      message: `Agent "${agentId}": agent.ts must export the agent function as its default export (export default function Agent() {...})`,
      file: agentModule.rel,
      line: 1,
      column: 1,
    });
  }
  const where = (t: StaticTool) => {
    const { line, column } = positionOf(t.mod, t.resultNode ?? t.call);
    return `${t.mod.rel}:${line}:${column}`;
  };
  const byName = new Map<string, StaticTool>();
  for (const tool of state.tools) {
    if (!tool.name) continue;
    const first = byName.get(tool.name);
    if (first) {
      errors.push(
        errorAt(
          tool.mod,
          tool.call,
          "tool_name_duplicate",
          `Agent "${agentId}" loads two tools named "${tool.name}" (${where(first)} and this one); tool names must be unique within an agent`,
        ),
      );
    } else {
      byName.set(tool.name, tool);
    }
  }
  const resultTools = state.tools.filter((t) => t.result);
  const [first, ...others] = resultTools;
  for (const other of others) {
    errors.push(
      errorAt(
        other.mod,
        other.resultNode ?? other.call,
        "result_tool_conflict",
        `Agent "${agentId}" has more than one result tool: "${first!.name ?? "?"}" (${where(first!)}) and "${other.name ?? "?"}" (${where(other)}); an agent declares at most one`,
      ),
    );
  }
  for (const tool of resultTools) {
    if (!tool.output || !tool.readable) continue;
    const extracted = extractOutput(tool, { graph, agentDir: state.entry.dir });
    errors.push(...extracted.errors);
    if (extracted.value !== undefined) state.outputs.set(tool, extracted.value);
  }
  return errors;
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

/** A module exports a tool that no defineTool() call of its own made: its output is unknown. */
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
    const names = new Set((toolsByModule.get(mod) ?? []).map((t) => t.name));
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

function report(project: Project, state: AgentState, loaded: LoadResult): AgentReport {
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
