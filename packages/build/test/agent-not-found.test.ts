// `agent_not_found` reaches API callers (404 from POST /sessions): it names the agent id and the
// alias asked for, never the server's deployments directory.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createDeploymentAgents } from "../src/index.ts";

const dir = mkdtempSync(join(tmpdir(), "oc-deployment-missing-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("agent_not_found from built deployments", () => {
  it("names the agent and alias, not the deployments path", async () => {
    const error = (await createDeploymentAgents(dir)
      .describe("ghost@production")
      .then(
        () => undefined,
        (e: unknown) => e,
      )) as { code: string; message: string; details: { path?: string } };
    expect(error.code).toBe("agent_not_found");
    expect(error.details.path).toBe("agentId");
    expect(error.message).toContain('"ghost"');
    expect(error.message).toContain("production");
    expect(error.message).not.toContain(dir);
    expect(error.message).not.toContain(".opencomputer");
  });
});
