import { afterAll, describe, expect, it } from "vitest";
import { type DevServer, startDev } from "./dev-server.ts";

// biome-ignore lint/suspicious/noExplicitAny: API replies are checked with expect
type Loose = any;
let dev: DevServer | undefined;
afterAll(() => dev?.stop());

describe("opencomputer dev", () => {
  it("builds, serves the API with a printed key, runs a session, and stops on SIGTERM", async () => {
    dev = await startDev("dev");
    const { url, key, child } = dev;
    const call = (method: string, path: string, body?: unknown) =>
      fetch(`${url}${path}`, {
        method,
        headers: { "x-api-key": key, "content-type": "application/json" },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
    expect((await fetch(`${url}/sessions`)).status).toBe(401);
    // The catalog: the example's agent with its latest deployment and its tool.
    const { agents } = (await (await call("GET", "/agents")).json()) as {
      agents: Array<{ id: string; aliases: { development: string }; deployment: Loose }>;
    };
    expect(agents.map((a) => a.id)).toEqual(["support"]);
    const depId = agents[0]!.aliases.development;
    expect(agents[0]!.deployment.tools.map((t: Loose) => t.name)).toEqual(["lookup_order"]);
    const { deployments } = (await (await call("GET", "/deployments?agent=support")).json()) as {
      deployments: Array<{ id: string }>;
    };
    expect(deployments.map((d) => d.id)).toEqual([depId]);
    const { deployment } = (await (await call("GET", `/deployments/${depId}`)).json()) as {
      deployment: Loose;
    };
    expect(deployment.tools[0].input.required).toEqual(["orderId"]);
    expect((await call("GET", "/deployments/dep_00000000000000000000")).status).toBe(404);
    expect((await call("GET", "/deployments?agents=x")).status).toBe(400);
    const created = (await (
      await call("POST", "/sessions", { agentId: "support@development" })
    ).json()) as {
      session: { id: string };
    };
    const sessionId = created.session.id;
    expect(
      (await call("POST", `/sessions/${sessionId}/turns`, { input: { text: "Where is A1?" } }))
        .status,
    ).toBe(202);
    let types: string[] = [];
    for (let i = 0; i < 100 && !types.includes("turn.completed"); i++) {
      await new Promise((r) => setTimeout(r, 100));
      const { events } = (await (
        await call("GET", `/sessions/${sessionId}/events?after=0`)
      ).json()) as {
        events: Array<{ type: string }>;
      };
      types = events.map((e) => e.type);
    }
    expect(types).toContain("tool.completed");
    expect(types).toContain("turn.completed");
    const exited = new Promise<number | null>((r) => child.once("exit", r));
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
  }, 90_000);
});
