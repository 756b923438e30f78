// `opencomputer/project.ts`: the project's name and the ids of its agents, as the platform's
// docs write it (`export default { name, agents: ["hello-world", "researcher"] }`), plus our
// own `shell: false`. It is read from source, never run: the build loads no project code in its
// own process, and a declaration worth checking is one a reader can see in the file.

import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";
import type { BuildError } from "./errors.ts";
import { formOf, propertyKey, unwrap } from "./literal.ts";
import { errorAt, type ParsedModule, parseModule, positionOf } from "./parse.ts";
import { AGENT_ID_PATTERN, type AgentEntry, type Project, relativePath } from "./project.ts";

/** Where the declaration lives, relative to the project directory. */
export const PROJECT_FILE = "opencomputer/project.ts";

/** The keys project.ts may have. */
const KEYS = ["name", "agents", "shell"] as const;

export interface ProjectAgent {
  id: string;
  /** 1-based position of the id's string in project.ts. */
  line: number;
  column: number;
}

/** What `opencomputer/project.ts` declares (`readProjectDeclaration`). */
export interface ProjectDeclaration {
  /** Project-relative path of the file (`opencomputer/project.ts`). */
  file: string;
  name?: string;
  /** The agent ids listed, in order (what `useSubagent(id)` may name). */
  agents: ProjectAgent[];
  /** False when the project turns off the `shell` every session gets (default true). */
  shell: boolean;
  /** Where `agents` is written, for messages about agents it lacks. */
  agentsAt: { line: number; column: number };
}

export interface ProjectDeclarationResult {
  /** Undefined when the project has no project.ts (it is optional) or it cannot be read. */
  declaration?: ProjectDeclaration;
  errors: BuildError[];
}

/** Reads `opencomputer/project.ts` of the project in `dir` without running it. */
export function readProjectDeclaration(root: string): ProjectDeclarationResult {
  const file = join(root, PROJECT_FILE);
  if (!existsSync(file)) return { errors: [] };
  const mod = parseModule(file, PROJECT_FILE, readFileSync(file, "utf8"));
  if (mod.syntaxErrors.length > 0) return { errors: mod.syntaxErrors };
  const errors: BuildError[] = [];
  const literal = defaultObject(mod, errors);
  if (!literal) return { errors };
  const declaration: ProjectDeclaration = {
    file: PROJECT_FILE,
    agents: [],
    shell: true,
    agentsAt: positionOf(mod, literal),
  };
  let sawAgents = false;
  for (const property of literal.properties) {
    if (!ts.isPropertyAssignment(property)) {
      errors.push(invalid(mod, property, `write each key as \`key: value\``));
      continue;
    }
    const key = propertyKey(property.name);
    const value = unwrap(property.initializer);
    if (key === "name") {
      if (ts.isStringLiteralLike(value)) declaration.name = value.text;
      else errors.push(invalid(mod, value, `"name" is ${formOf(mod, value)}; write a string`));
    } else if (key === "shell") {
      if (value.kind === ts.SyntaxKind.TrueKeyword) declaration.shell = true;
      else if (value.kind === ts.SyntaxKind.FalseKeyword) declaration.shell = false;
      else
        errors.push(invalid(mod, value, `"shell" is ${formOf(mod, value)}; write true or false`));
    } else if (key === "agents") {
      sawAgents = true;
      declaration.agentsAt = positionOf(mod, property);
      readAgents(mod, value, declaration, errors);
    } else {
      errors.push(
        errorAt(
          mod,
          property,
          "project_key_unknown",
          `${PROJECT_FILE} has the key ${JSON.stringify(key ?? property.name.getText(mod.source))}; it may have ${KEYS.join(", ")}`,
        ),
      );
    }
  }
  if (!sawAgents) {
    errors.push(
      errorAt(
        mod,
        literal,
        "project_invalid",
        `${PROJECT_FILE} lists no agents; add agents: ["<agentId>", ...] naming each directory of opencomputer/agents/`,
      ),
    );
  }
  return { declaration, errors };
}

/**
 * The agents of the directory and of project.ts must agree: a listed id with no
 * `opencomputer/agents/<id>/agent.ts` and an agent directory the list leaves out are both errors,
 * placed in project.ts, where the fix is written.
 */
export function projectAgentErrors(
  project: Project,
  declaration: ProjectDeclaration,
  found: AgentEntry[],
): BuildError[] {
  const errors: BuildError[] = [];
  const present = new Set(found.map((a) => a.agentId));
  const listed = new Set(declaration.agents.map((a) => a.id));
  for (const agent of declaration.agents) {
    if (present.has(agent.id)) continue;
    errors.push({
      code: "project_agent_missing",
      message: `${PROJECT_FILE} lists the agent "${agent.id}", but there is no opencomputer/agents/${agent.id}/agent.ts; create it or remove "${agent.id}" from agents`,
      file: declaration.file,
      line: agent.line,
      column: agent.column,
    });
  }
  for (const agent of found) {
    if (listed.has(agent.agentId)) continue;
    errors.push({
      code: "project_agent_unlisted",
      message: `${relativePath(project, agent.file)} defines the agent "${agent.agentId}", which ${PROJECT_FILE} does not list; add "${agent.agentId}" to agents`,
      file: declaration.file,
      ...declaration.agentsAt,
    });
  }
  return errors;
}

function readAgents(
  mod: ParsedModule,
  value: ts.Expression,
  declaration: ProjectDeclaration,
  errors: BuildError[],
): void {
  if (!ts.isArrayLiteralExpression(value)) {
    errors.push(
      invalid(mod, value, `"agents" is ${formOf(mod, value)}; write an array of agent ids`),
    );
    return;
  }
  for (const element of value.elements) {
    const e = unwrap(element as ts.Expression);
    if (!ts.isStringLiteralLike(e)) {
      errors.push(invalid(mod, e, `an agent id is ${formOf(mod, e)}; write a string`));
      continue;
    }
    const at = positionOf(mod, e);
    if (!AGENT_ID_PATTERN.test(e.text)) {
      errors.push(
        errorAt(
          mod,
          e,
          "agent_id_invalid",
          `${JSON.stringify(e.text)} is not a valid agent id (${AGENT_ID_PATTERN})`,
        ),
      );
      continue;
    }
    if (declaration.agents.some((a) => a.id === e.text)) {
      errors.push(
        errorAt(
          mod,
          e,
          "project_agent_duplicate",
          `${PROJECT_FILE} lists the agent "${e.text}" twice`,
        ),
      );
      continue;
    }
    declaration.agents.push({ id: e.text, ...at });
  }
}

/** The object literal of `export default {...}` or of a const it names (`export default project`). */
function defaultObject(
  mod: ParsedModule,
  errors: BuildError[],
): ts.ObjectLiteralExpression | undefined {
  const exported = mod.exports.get("default");
  if (!exported) {
    errors.push({
      code: "project_invalid",
      message: `${PROJECT_FILE} has no default export; write export default { name: "...", agents: ["<agentId>"] }`,
      file: PROJECT_FILE,
      line: 1,
      column: 1,
    });
    return undefined;
  }
  let expression: ts.Expression | undefined;
  if (exported.kind === "expression") expression = exported.expression;
  else if (exported.kind === "local") {
    const binding = mod.topLevel.get(exported.local);
    if (binding?.kind === "const" && !binding.destructured) expression = binding.initializer;
  }
  const value = expression && unwrap(expression);
  if (value && ts.isObjectLiteralExpression(value)) return value;
  errors.push(
    invalid(
      mod,
      value ?? exported.node,
      `the default export must be an object literal (or a const initialised by one) so it can be read without running code; got ${value ? formOf(mod, value) : "something else"}`,
    ),
  );
  return undefined;
}

function invalid(mod: ParsedModule, node: ts.Node, message: string): BuildError {
  return errorAt(mod, node, "project_invalid", `${PROJECT_FILE}: ${message}`);
}
