import { describe, expect, it } from "vitest";
import {
  bearer,
  ConnectionDefinitionError,
  connection,
  defineConnection,
  defineTool,
  EgressError,
  useConnection,
  useSessionData,
  useSubagent,
  useTool,
} from "../src/index.ts";
import { RenderError, renderAgent } from "../src/internal.ts";
import { useSecret } from "../src/secrets.ts";
import { expectFailure } from "./helpers.ts";

const input = { source: "user" as const, text: "hi" };
/** Renders an agent that only makes the given selections. */
const selecting = (select: () => void) =>
  render(() => {
    select();
    return "x";
  });
const render = (agent: () => string, sessionData?: Record<string, never>) =>
  renderAgent(agent, { input, ...(sessionData ? { sessionData } : {}) });

describe("hooks outside a render", () => {
  it.each([
    ["useSubagent", () => useSubagent("researcher")],
    ["useConnection", () => useConnection(connection("github"))],
    ["useSessionData", () => useSessionData("locale")],
  ])("%s throws hooks_outside_render", (_name, call) => {
    expectFailure(call, RenderError, "hooks_outside_render");
  });
});

describe("useSubagent", () => {
  it("selects agents once each, in order, and only when called", () => {
    const result = render(() => {
      useSubagent("researcher");
      useSubagent("writer");
      useSubagent("researcher");
      return "x";
    });
    expect(result.subagents).toEqual(["researcher", "writer"]);
    expect(render(() => "x").subagents).toEqual([]);
  });

  it("refuses what is not an agent id, and a tool named like its delegation tool", () => {
    for (const bad of ["", "a b", "x".repeat(56), 42]) {
      expectFailure(
        () => selecting(() => useSubagent(bad as string)),
        RenderError,
        "subagent_invalid",
      );
    }
    const clash = defineTool({ name: "subagent_writer", description: "d", run: () => null });
    const error = expectFailure(
      () =>
        selecting(() => {
          useTool(clash);
          useSubagent("writer");
        }),
      RenderError,
      "tool_name_conflict",
    );
    expect(error.message).toMatch(/subagent_writer/);
  });
});

describe("connection(id) and useConnection", () => {
  it("references a connection by id; both kinds are recorded once each", () => {
    const github = connection("github");
    expect(github.id).toBe("github");
    expect(Object.isFrozen(github)).toBe(true);
    const api = defineConnection({
      id: "customer-api",
      origin: "https://api.example.com",
      headers: { authorization: bearer(useSecret("CUSTOMER_API_TOKEN")) },
    });
    const result = render(() => {
      useConnection(github);
      useConnection(api);
      useConnection(connection("github"));
      return "x";
    });
    expect(result.connections).toEqual(["github", "customer-api"]);
  });

  it("refuses a bad id and values that are not connections", () => {
    expectFailure(() => connection("no spaces"), ConnectionDefinitionError, "connection_invalid");
    expectFailure(
      () => selecting(() => useConnection({ id: "github" } as never)),
      RenderError,
      "connection_invalid",
    );
  });

  it("fetches only where the egress gateway is provided", async () => {
    await expect(connection("github").fetch("/user")).rejects.toBeInstanceOf(EgressError);
    await expect(connection("github").fetch("/user")).rejects.toMatchObject({
      code: "egress_unavailable",
    });
  });
});

describe("useSessionData", () => {
  it("reads keys of a frozen snapshot; absent keys and no data are undefined", () => {
    let seen: unknown[] = [];
    const data = { locale: "fr", tags: ["a"] } as unknown as Record<string, never>;
    render(() => {
      seen = [useSessionData("locale"), useSessionData("tags"), useSessionData("missing")];
      return "x";
    }, data);
    expect(seen).toEqual(["fr", ["a"], undefined]);
    expect(Object.isFrozen(seen[1])).toBe(true);
    render(() => {
      seen = [useSessionData("locale"), useSessionData("toString")];
      return "x";
    });
    expect(seen).toEqual([undefined, undefined]);
    expectFailure(
      () => selecting(() => useSessionData("")),
      RenderError,
      "session_data_key_invalid",
    );
  });
});
