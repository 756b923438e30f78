// Every problem the build finds is one `BuildError`: a stable code for programs (`--json`) and a
// position a person's editor can jump to. The table below is the single list of codes; the docs
// (docs/build.md) repeat it with examples.

export const BUILD_ERROR_CODES = {
  // Project and agents
  agent_not_found: "no opencomputer/agents/<id>/agent.ts in the project",
  agent_id_invalid: "an agent directory name is not a valid agent id",
  agent_no_default_export: "agent.ts has no default export (the agent function)",
  syntax_error: "a module does not parse",
  import_not_found: "a relative import names no file",
  // opencomputer/project.ts
  project_invalid: "project.ts is not a static object literal with name, agents and shell",
  project_key_unknown: "project.ts has a key other than name, agents and shell",
  project_agent_missing: "project.ts lists an agent with no opencomputer/agents/<id>/agent.ts",
  project_agent_unlisted: "an agent directory that project.ts does not list",
  project_agent_duplicate: "project.ts lists an agent twice",
  // The defineTool() call
  tool_not_literal: "the defineTool() argument is not an object literal",
  tool_not_exported: "defineTool() is not the initializer of an exported top-level const",
  spread_in_tool: "a spread (...x) in the defineTool() object",
  computed_property:
    "a computed property name ([x]) in the defineTool() object or the output schema",
  property_not_ordinary: "name, result or output written as a method, getter or setter",
  duplicate_property: "name, result or output given twice",
  name_missing: "the defineTool() object has no name",
  name_not_literal: "name is not a string literal",
  tool_name_invalid: "name does not match /^[a-zA-Z0-9_-]{1,64}$/",
  tool_name_reserved: 'name is "ask", the platform\'s question tool',
  tool_name_duplicate: "two tools of one agent have the same name",
  result_not_literal: "result is not the literal true or false",
  // useTool("<id>")
  tool_unknown_builtin: "useTool names a built-in tool id that no runtime provides",
  // Result tools
  result_tool_conflict: "an agent has more than one result tool",
  result_tool_requires_output: "a result tool without output",
  result_tool_requires_run: "a result tool with preview/apply or without run",
  // The result tool's output schema
  output_function_call: "output is (or is initialised by) a function call",
  output_let_binding: "output refers to a let binding",
  output_var_binding: "output refers to a var binding",
  output_namespace_member: "output is a member access such as schemas.report",
  output_package_import: "output is imported from a package",
  output_import_outside_agent: "output is imported from a module outside the agent directory",
  output_reexport: "output is reached through export ... from (a re-export)",
  output_export_not_found: "the imported module does not export that name",
  output_spread: "a spread inside the output schema",
  output_circular: "output's const references form a cycle",
  output_not_static: "any other form that is not a JSON literal (identifier, template, etc.)",
  // Loading the tool modules
  tool_module_load_failed: "a module threw while it loaded (defineTool's own codes pass through)",
  tool_module_load_timeout: "loading the modules did not finish within the time limit",
  tool_not_static: "a module exports a tool the build did not find as a defineTool() call",
  // Schedules (agents/<id>/schedules/<name>.ts); defineSchedule's own codes pass through
  schedule_not_defined: "a schedule module does not default-export defineSchedule({...})",
  schedule_not_literal: "a schedule field is not written out as a literal",
  schedule_id_mismatch: "a schedule's id is not its file name",
  schedule_cron_invalid: "the cron expression is not five valid fields, or never occurs",
  // What agent code names by id
  subagent_unknown: 'useSubagent("id") names no agent of the project',
  subagent_self: "an agent's useSubagent names the agent itself",
  connection_unknown: 'connection("id") names no connection the agent may use',
  // Bundling
  bundle_failed: "esbuild could not bundle the agent",
  // MCP servers (defineMcpServer / useMcpServer)
  mcp_server_unknown: 'useMcpServer("<id>") names a server the agent does not define',
  mcp_server_duplicate: "two different MCP servers of one agent have the same id",
  mcp_connection_unknown: "an MCP server names a connection the agent does not declare",
  mcp_connection_mismatch:
    "an MCP server's connection cannot reach its URL (origin, pathPrefix, POST)",
  // Skills (skills/<name>/SKILL.md)
  skill_invalid: "skills/ holds something other than one directory per skill",
  skill_missing_file: "a skill directory without SKILL.md",
  skill_frontmatter_invalid:
    "SKILL.md's frontmatter lacks name or description, or its name is not the directory's",
  skill_file_outside:
    "a symbolic link or non-regular file in a skill (it could reach outside the directory)",
  skill_too_large: "a skill file, skill or agent past the size limits",
} as const;

export type BuildErrorCode = keyof typeof BUILD_ERROR_CODES;

export interface BuildError {
  /** A `BuildErrorCode`, or a `ToolDefinitionError` code passed through from `defineTool`. */
  code: string;
  message: string;
  /** Relative to the project directory, with `/` separators. */
  file: string;
  /** 1-based. */
  line: number;
  /** 1-based, in UTF-16 code units (what editors count). */
  column: number;
}

/**
 * Problems that do not stop a build: the deployment is written and runs, but something will
 * work less well than the author may expect.
 */
export const BUILD_WARNING_CODES = {
  tool_schema_not_strict:
    "a tool's input schema is outside OpenAI's strict-mode subset; OpenAI models get it non-strict",
  tool_returns_response:
    "a tool's run or apply returns a fetch Response, which is recorded only as its description",
} as const;

export type BuildWarningCode = keyof typeof BUILD_WARNING_CODES;

/** A warning, placed like an error (at the tool's defineTool() call), with what it is about. */
export interface BuildWarning extends BuildError {
  code: BuildWarningCode;
  agentId: string;
  tool: string;
  /** JSON path into the tool's input schema, e.g. `$.properties.address`. */
  path: string;
  reason: string;
}

/** `file:line:column: warning code message`, one line per warning, in a stable order. */
export function formatWarnings(warnings: readonly BuildWarning[]): string {
  return sortErrors(warnings)
    .map((w) => `${w.file}:${w.line}:${w.column}: warning ${w.code} ${w.message}`)
    .join("\n");
}

/** `file:line:column: code message`, one line per error, in a stable order. */
export function formatErrors(errors: readonly BuildError[]): string {
  return sortErrors(errors)
    .map((e) => `${e.file}:${e.line}:${e.column}: ${e.code} ${e.message}`)
    .join("\n");
}

/** Sorted by file, line, column, code; exact duplicates (a module shared by agents) dropped. */
export function sortErrors<T extends BuildError>(errors: readonly T[]): T[] {
  const seen = new Set<string>();
  const unique: T[] = [];
  for (const e of errors) {
    const key = `${e.file}\0${e.line}\0${e.column}\0${e.code}\0${e.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    unique.push(e);
  }
  return unique.sort(
    (a, b) =>
      compare(a.file, b.file) ||
      a.line - b.line ||
      a.column - b.column ||
      compare(a.code, b.code) ||
      compare(a.message, b.message),
  );
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
