import type { JsonValue } from "@opencomputer/agent";
import { startTestMcpServer, type TestMcpServer } from "@opencomputer/testkit/mcp-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMcpConnector } from "../src/index.ts";

let server: TestMcpServer;
beforeAll(async () => {
  server = await startTestMcpServer();
});
afterAll(() => server.close());

const op = (timeoutMs = 10_000) => ({ signal: new AbortController().signal, timeoutMs });

describe("createMcpConnector against a real SDK server", () => {
  it("lists tools with their schemas and calls them", async () => {
    const connector = createMcpConnector({ allowLoopbackHttp: true });
    const session = await connector.open({ id: "docs", url: server.url }, op());
    try {
      const tools = await session.listTools(op());
      expect(tools.map((t) => t.name).sort()).toEqual(["explode", "lookup", "search", "slow"]);
      const search = tools.find((t) => t.name === "search")!;
      expect(search.description).toBe("Search the company documentation");
      expect(search.inputSchema).toMatchObject({
        type: "object",
        properties: { query: { type: "string" } },
        required: ["query"],
      });
      const progress: JsonValue[] = [];
      const called = { ...op(), onProgress: (m: JsonValue) => progress.push(m) };
      expect(await session.callTool("search", { query: "vpn", limit: 2 }, called)).toEqual({
        ok: true,
        output: "vpn result 1\nvpn result 2",
      });
      expect(await session.callTool("lookup", { id: "d7" }, called)).toEqual({
        ok: true,
        output: { id: "d7", title: "Document d7" },
      });
      const exploded = await session.callTool("explode", {}, called);
      expect(exploded).toMatchObject({ ok: false, code: "mcp_tool_error" });
      expect(exploded.ok === false && exploded.message).toContain("the index is corrupt");
    } finally {
      await session.close();
    }
  });

  it("a timed-out call and a cancelled call fail with their codes; the server sees the cancel", async () => {
    const connector = createMcpConnector({ allowLoopbackHttp: true });
    const session = await connector.open({ id: "docs", url: server.url }, op());
    try {
      const progress: JsonValue[] = [];
      const timedOut = await session.callTool(
        "slow",
        {},
        {
          ...op(300),
          onProgress: (m) => progress.push(m),
        },
      );
      expect(timedOut).toMatchObject({ ok: false, code: "mcp_timeout" });
      expect(progress[0]).toMatchObject({ progress: 1, total: 2, message: "warming up" });
      const controller = new AbortController();
      const pending = session.callTool(
        "slow",
        {},
        {
          signal: controller.signal,
          timeoutMs: 60_000,
          onProgress: () => controller.abort(new Error("interrupted")),
        },
      );
      expect(await pending).toMatchObject({ ok: false, code: "mcp_cancelled" });
      // Both the time limit and the abort told the server: each run of slow saw its cancel.
      await server.slowCancelled(2);
    } finally {
      await session.close();
    }
  });

  it("a server that is down, and plain http outside dev mode, fail with clear codes", async () => {
    const down = await startTestMcpServer();
    const url = down.url;
    await down.close();
    const connector = createMcpConnector({ allowLoopbackHttp: true });
    await expect(connector.open({ id: "gone", url }, op())).rejects.toMatchObject({
      code: "mcp_server_unavailable",
      message: expect.stringContaining('MCP server "gone" cannot be reached'),
    });
    await expect(
      createMcpConnector().open({ id: "docs", url: server.url }, op()),
    ).rejects.toMatchObject({
      code: "mcp_server_unavailable",
      message: expect.stringContaining("dev mode"),
    });
  });
});
