// `opencomputer usage`: against `opencomputer dev` (GET /usage) and on the embedded store.
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createSqliteStore } from "@opencomputer/store-sqlite";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { main } from "../src/main.ts";
import { type DevServer, startDev } from "./dev-server.ts";

const saved = { ...process.env };
let dev: DevServer | undefined;
let config: string;

beforeAll(() => {
  // No linked server from the person running the tests.
  config = mkdtempSync(join(tmpdir(), "oc-usage-config-"));
  process.env.OPENCOMPUTER_CONFIG_DIR = config;
});

afterAll(() => {
  dev?.stop();
  rmSync(config, { recursive: true, force: true });
  process.env = saved;
});

function useServer(server: { url: string; key: string } | null) {
  if (server) {
    process.env.OPENCOMPUTER_API_URL = server.url;
    process.env.OPENCOMPUTER_API_KEY = server.key;
  } else {
    delete process.env.OPENCOMPUTER_API_URL;
    delete process.env.OPENCOMPUTER_API_KEY;
  }
}

async function run(argv: string[]) {
  let stdout = "";
  let stderr = "";
  const o = vi.spyOn(process.stdout, "write").mockImplementation((c) => {
    stdout += String(c);
    return true;
  });
  const e = vi.spyOn(process.stderr, "write").mockImplementation((c) => {
    stderr += String(c);
    return true;
  });
  try {
    return { code: await main(["usage", ...argv]), stdout, stderr };
  } finally {
    o.mockRestore();
    e.mockRestore();
  }
}

describe("opencomputer usage", () => {
  it("reads the embedded store of a project, grouped, as a table and as JSON", async () => {
    useServer(null);
    const dir = mkdtempSync(join(tmpdir(), "oc-usage-"));
    mkdirSync(join(dir, ".opencomputer"));
    const store = createSqliteStore({ path: join(dir, ".opencomputer", "data.db") });
    const now = new Date().toISOString();
    for (const [id, agentId, costUsd] of [
      ["ses_a", "support", 0.5],
      ["ses_b", "billing", null],
    ] as const) {
      const session = {
        id,
        projectId: "default",
        agentId,
        deploymentId: "dep_1",
        environment: "development",
        status: "idle" as const,
        source: "api" as const,
        labels: {},
        executionMode: "default" as const,
        result: null,
        question: null,
        runtime: {},
        revision: 1,
        lastSeq: 0,
        idempotencyKey: null,
        lease: null,
        createdAt: now,
        updatedAt: now,
      };
      await store.createSession(session, [
        { type: "session.created", data: { agentId, deploymentId: "dep_1" } },
      ]);
      await store.apply(id, {
        ops: [],
        events: [
          {
            type: "usage.recorded",
            data: {
              provider: "anthropic",
              model: "claude-sonnet-4.6",
              inputTokens: 1000,
              outputTokens: 200,
              costUsd,
              pricing: costUsd === null ? "unknown" : "table",
            },
          },
        ],
      });
    }
    await store.close();
    try {
      const table = await run(["--dir", dir, "--group-by", "agent"]);
      expect(table.code).toBe(0);
      const rows = table.stdout.split("\n");
      expect(rows[1]).toMatch(/^agent\s+steps\s+input\s+output\s+cache read\s+cache write\s+cost$/);
      expect(rows[2]).toMatch(/^billing\s+1\s+1000\s+200\s+0\s+0\s+\$0\.00\*$/);
      expect(rows[3]).toMatch(/^support\s+1\s+1000\s+200\s+0\s+0\s+\$0\.50$/);
      expect(rows[4]).toMatch(/^total\s+2\s+2000\s+400\s+0\s+0\s+\$0\.50\*$/);
      expect(table.stdout).toContain("1 step(s) used a model with no price");
      const asJson = await run(["--dir", dir, "--json"]);
      expect(JSON.parse(asJson.stdout).total).toMatchObject({
        steps: 2,
        costUsd: 0.5,
        unpricedSteps: 1,
      });
      const bad = await run(["--dir", dir, "--group-by", "model"]);
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain("--group-by: must be agent, session or label.<key>");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("asks the server when one is configured", async () => {
    dev = await startDev("usage-cli");
    useServer(dev);
    const headers = { "x-api-key": dev.key, "content-type": "application/json" };
    const created = (await (
      await fetch(`${dev.url}/sessions`, {
        method: "POST",
        headers,
        body: JSON.stringify({ agentId: "support@development" }),
      })
    ).json()) as { session: { id: string } };
    const id = created.session.id;
    await fetch(`${dev.url}/sessions/${id}/turns`, {
      method: "POST",
      headers,
      body: JSON.stringify({ input: "Where is A1?" }),
    });
    let steps = 0;
    for (let i = 0; i < 200 && steps === 0; i++) {
      const { events } = (await (
        await fetch(`${dev.url}/sessions/${id}/events?after=0`, { headers })
      ).json()) as { events: Array<{ type: string }> };
      if (
        events.some(
          (e) =>
            e.type.startsWith("turn.") && e.type !== "turn.started" && e.type !== "turn.queued",
        )
      )
        steps = events.filter((e) => e.type === "usage.recorded").length;
      else await new Promise((r) => setTimeout(r, 50));
    }
    expect(steps).toBeGreaterThan(0);
    const report = await run(["--json", "--group-by", "session"]);
    expect(report.code).toBe(0);
    const body = JSON.parse(report.stdout);
    expect(body.groupBy).toBe("session");
    expect(body.groups).toEqual([expect.objectContaining({ key: id, steps })]);
    const bad = await run(["--from", "2026-02-01", "--to", "2026-01-01"]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("error invalid_query: from: is after to");
  }, 60_000);
});
