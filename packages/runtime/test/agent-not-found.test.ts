// `agent_not_found` reaches API callers (404 from POST /sessions): it names the agent id and the
// alias asked for, never the server's directories.

import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { AgentNotFoundError, createSourceAgents } from "../src/index.ts";

const dir = mkdtempSync(join(tmpdir(), "oc-agent-missing-"));
mkdirSync(join(dir, "opencomputer", "agents"), { recursive: true });
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("agent_not_found from source agents", () => {
  it("names the agent and alias, not the absolute path", async () => {
    const error = await createSourceAgents(dir)
      .describe("ghost@development")
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(error).toBeInstanceOf(AgentNotFoundError);
    const { code, message } = error as AgentNotFoundError;
    expect(code).toBe("agent_not_found");
    expect(message).toContain('"ghost"');
    expect(message).toContain("development");
    expect(message).not.toContain(dir);
    expect(message).not.toContain(tmpdir());
  });
});
