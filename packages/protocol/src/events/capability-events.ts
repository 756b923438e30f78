import { integer, object, optional, string } from "../shape.ts";

/**
 * What the runtime's own capabilities did for a turn: a skill (or one of its files) the model
 * loaded, and an attached MCP server whose tools could not be listed for the turn.
 */
export const capabilityEvents = {
  /** Recorded with the `load_skill` call's tool.completed, in the same write. */
  "skill.loaded": object({
    callId: string(),
    skill: string(),
    /** The file inside the skill's directory; absent for SKILL.md's body. */
    file: optional(string()),
    bytes: integer(),
  }),
  /** Once per turn and server: its tools are missing from the turn's steps. */
  "mcp.unavailable": object({ server: string(), code: string(), message: string() }),
};
