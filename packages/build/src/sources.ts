// The static phase of a build: from each agent's agent.ts, the modules it loads, the tools they
// define, the rules about those tools, and the result tool's output schema, all read from
// source without running any of it.

import { unknownBuiltInErrors } from "./built-in-ids.ts";
import type { BuildError } from "./errors.ts";
import { ModuleGraph } from "./graph.ts";
import type { JsonValue } from "./literal.ts";
import { extractOutput } from "./output.ts";
import { errorAt, type ParsedModule, positionOf } from "./parse.ts";
import { type AgentEntry, findAgents, type Project } from "./project.ts";
import {
  type ProjectDeclaration,
  projectAgentErrors,
  readProjectDeclaration,
} from "./project-file.ts";
import { findReferences, type References, subagentErrors } from "./references.ts";
import { findTools, type StaticTool } from "./tools.ts";

export interface AgentState {
  entry: AgentEntry;
  /** Every project module the agent loads, dependencies first. */
  modules: ParsedModule[];
  /** Every tool those modules define: all the tools the agent may select. */
  tools: StaticTool[];
  /** The result tool's output schema, when it could be read. */
  outputs: Map<StaticTool, JsonValue>;
  /** How many errors the static phase found for this agent (its bundle waits for none). */
  staticErrors: number;
  /** The agents and connections its code names by id. */
  references: References;
}

export interface Sources {
  graph: ModuleGraph;
  states: AgentState[];
  toolsByModule: Map<ParsedModule, StaticTool[]>;
  errors: BuildError[];
  /** What `opencomputer/project.ts` declares; absent when the project has none. */
  declaration?: ProjectDeclaration;
}

export function readSources(project: Project): Sources {
  const graph = new ModuleGraph(project);
  const errors: BuildError[] = [];
  const found = findAgents(project);
  errors.push(...found.errors);
  const declared = readProjectDeclaration(project.root);
  errors.push(...declared.errors);
  if (declared.declaration) {
    errors.push(...projectAgentErrors(project, declared.declaration, found.agents));
  }
  // A module shared by agents is read, and its errors reported, once.
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
  // What useSubagent may name: the agents project.ts lists, or, without one, the agent directories.
  const agentIds =
    declared.declaration?.agents.map((a) => a.id) ?? found.agents.map((a) => a.agentId);
  const states: AgentState[] = found.agents.map((entry) => {
    const before = errors.length;
    const reachable = graph.reachable(entry.file);
    errors.push(...reachable.errors);
    const modules = reachable.modules.map((file) => graph.module(file));
    const tools = modules.flatMap(moduleTools);
    const references = referencesOf(modules);
    const state: AgentState = {
      entry,
      modules,
      tools,
      outputs: new Map(),
      staticErrors: 0,
      references,
    };
    errors.push(...agentRules(graph, state));
    errors.push(...subagentErrors(entry.agentId, references.subagents, agentIds));
    state.staticErrors = errors.length - before;
    return state;
  });
  errors.push(...unknownBuiltInErrors(new Set(states.flatMap((s) => s.modules))));
  return {
    graph,
    states,
    toolsByModule,
    errors,
    ...(declared.declaration ? { declaration: declared.declaration } : {}),
  };
}

function referencesOf(modules: readonly ParsedModule[]): References {
  const all: References = { subagents: [], connections: [] };
  for (const mod of modules) {
    const found = findReferences(mod);
    all.subagents.push(...found.subagents);
    all.connections.push(...found.connections);
  }
  return all;
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
