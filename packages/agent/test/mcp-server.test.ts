import { describe, expect, it } from "vitest";
import {
  type AgentInput,
  bearer,
  connection,
  defineConnection,
  defineMcpServer,
  defineTool,
  McpServerDefinitionError,
  useMcpServer,
  useSecret,
} from "../src/index.ts";
import { collectMcpServers, RenderError, renderAgent } from "../src/internal.ts";
import { expectFailure } from "./helpers.ts";

const input: AgentInput = { source: "user", text: "docs please" };
const docs = defineMcpServer({ id: "company-docs", url: "https://mcp.example.com/server" });

function attached(select: () => void) {
  return renderAgent(
    () => {
      select();
      return "";
    },
    { input },
  ).mcpServers;
}

describe("defineMcpServer", () => {
  it("keeps id, normalised URL and the connection's id, frozen", () => {
    const auth = defineConnection({
      id: "docs-auth",
      origin: "https://mcp.example.com",
      headers: { Authorization: bearer(useSecret("DOCS_TOKEN")) },
    });
    const server = defineMcpServer({
      id: "docs",
      url: "https://mcp.example.com/mcp",
      connection: auth,
    });
    expect({ ...server }).toEqual({
      id: "docs",
      url: "https://mcp.example.com/mcp",
      connection: "docs-auth",
    });
    expect(Object.isFrozen(server)).toBe(true);
    expect(
      defineMcpServer({ id: "d2", url: "http://127.0.0.1:8080/mcp", connection: "x" }).connection,
    ).toBe("x");
  });

  it("takes a connection(id) reference: its id only, the declaration stays in connections/", () => {
    const collector = collectMcpServers();
    try {
      const server = defineMcpServer({
        id: "docs",
        url: "https://mcp.example.com/mcp",
        connection: connection("docs-auth"),
      });
      expect(server.connection).toBe("docs-auth");
      const [collected] = collector.take();
      expect(collected?.declaration.connection).toBe("docs-auth");
      expect(collected?.connection).toBeUndefined();
    } finally {
      collector.stop();
    }
  });

  it.each([
    [{ id: "has_underscore", url: "https://a.example" }, "id", 'no "_"'],
    [{ id: "9docs", url: "https://a.example" }, "id", "a letter"],
    [{ id: "docs", url: "http://mcp.example.com/mcp" }, "url", "must use https"],
    [{ id: "docs", url: "https://user:pw@mcp.example.com/" }, "url", "credentials"],
    [{ id: "docs", url: "https://mcp.example.com/?key=abc" }, "url", "query"],
    [{ id: "docs", url: "not a url" }, "url", "not a URL"],
    [{ id: "docs", url: "https://a.example", connection: 42 }, "connection", "defineConnection"],
    [
      { id: "docs", url: "https://a.example", conection: "x" },
      "conection",
      'did you mean "connection"',
    ],
  ])("refuses %j at %s", (definition, path, fragment) => {
    const error = expectFailure(
      () => defineMcpServer(definition as never),
      McpServerDefinitionError,
      "mcp_server_invalid",
      fragment,
    );
    expect(error.path).toBe(path);
  });

  it("reports each definition to the build's collector, with the stack of the call", () => {
    const collector = collectMcpServers();
    try {
      defineMcpServer({ id: "one", url: "https://one.example/mcp" });
      const [first] = collector.take();
      expect(first?.declaration).toEqual({ id: "one", url: "https://one.example/mcp" });
      expect(first?.stack).toContain("mcp-server.test.ts");
      expect(collector.take()).toEqual([]);
    } finally {
      collector.stop();
    }
    defineMcpServer({ id: "two", url: "https://two.example/mcp" });
    expect(collector.take()).toEqual([]);
  });
});

describe("useMcpServer", () => {
  it("attaches definitions and ids, once each, conditionally", () => {
    expect(attached(() => {})).toEqual([]);
    expect(
      attached(() => {
        useMcpServer(docs);
        useMcpServer("company-docs");
        useMcpServer("github");
        useMcpServer(docs);
      }),
    ).toEqual([{ id: "company-docs", url: "https://mcp.example.com/server" }, { id: "github" }]);
  });

  it("refuses two different servers under one id, and what is not a server", () => {
    const other = defineMcpServer({ id: "company-docs", url: "https://elsewhere.example/mcp" });
    expectFailure(
      () =>
        attached(() => {
          useMcpServer(docs);
          useMcpServer(other);
        }),
      RenderError,
      "mcp_server_conflict",
    );
    expectFailure(() => attached(() => useMcpServer("bad_id")), RenderError, "mcp_server_invalid");
    expectFailure(
      () => attached(() => useMcpServer({ id: "x", url: "https://x.example" } as never)),
      RenderError,
      "mcp_server_invalid",
      "defineMcpServer()",
    );
    expectFailure(() => useMcpServer(docs), RenderError, "hooks_outside_render");
  });
});

describe("reserved tool names", () => {
  it.each(["ask", "load_skill", "mcp__docs__search"])("defineTool refuses %s", (name) => {
    expect(() => defineTool({ name, description: "x", run: () => null })).toThrow(
      expect.objectContaining({ code: "tool_name_reserved" }),
    );
  });
});
