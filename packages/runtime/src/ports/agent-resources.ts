// What a deployment carries besides its code: the MCP servers it declared and the skills it
// packaged. The engine reads these from the resolver (`AgentResolver.resources`), never from
// agent code: a render only names which declared servers it attaches.

import type { McpServerDeclaration } from "./mcp.ts";

export interface SkillSummary {
  /** The skill's directory name, equal to its frontmatter `name`. */
  name: string;
  description: string;
  /** Supporting files, relative to the skill's directory, sorted (SKILL.md not included). */
  files: string[];
}

/** A file of a skill as `load_skill` returns it. */
export interface SkillFile {
  text: string;
  bytes: number;
}

/** The skills of one deployment. */
export interface SkillLibrary {
  list(): readonly SkillSummary[];
  /**
   * SKILL.md's body (without frontmatter) when `file` is absent, else that supporting file;
   * undefined when the skill or file does not exist. Throws when the packaged file no longer
   * matches what the build recorded.
   */
  read(skill: string, file?: string): Promise<SkillFile | undefined>;
}

export interface AgentResources {
  /**
   * The servers the deployment declared. Undefined when the resolver records none (agents given
   * as functions): then the definitions a render passes to useMcpServer are used as they are.
   */
  mcpServers?: readonly McpServerDeclaration[];
  skills?: SkillLibrary;
}
