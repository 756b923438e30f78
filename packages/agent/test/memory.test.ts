// defineMemory, documentMemory, httpMemory and useMemory: what a declaration accepts and refuses
// (with the field at fault), and what a render hands the hook and records.
import {
  bearer,
  defineConnection,
  defineMemory,
  documentMemory,
  httpMemory,
  MemoryDefinitionError,
  useMemory,
  useSecret,
} from "@opencomputer/agent";
import {
  isMemory,
  memoryDeclaration,
  RenderError,
  renderAgent,
} from "@opencomputer/agent/internal";
import { describe, expect, it } from "vitest";

const connection = defineConnection({
  id: "memory-service",
  origin: "https://memory.example.com",
  methods: ["POST"],
  pathPrefix: "/oc-memory",
  headers: { Authorization: bearer(useSecret("MEMORY_TOKEN")) },
});

function refusal(fn: () => unknown): { code: string; path: unknown; message: string } {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(MemoryDefinitionError);
    const e = error as MemoryDefinitionError;
    return { code: e.code, path: e.details.path, message: e.message };
  }
  throw new Error("expected a refusal");
}

describe("defineMemory", () => {
  it("declares document memory with the default or a given limit, frozen", () => {
    const notes = defineMemory({ id: "notes", description: "Workshop decisions." });
    expect(notes.provider).toEqual({ kind: "document", maxBytes: 8192 });
    expect(Object.isFrozen(notes)).toBe(true);
    expect(isMemory(notes)).toBe(true);
    expect(isMemory({ ...notes })).toBe(false);
    const small = defineMemory({
      id: "team-notes-2",
      description: "x",
      provider: documentMemory({ maxBytes: 16_384 }),
    });
    expect(memoryDeclaration(small)).toEqual({
      id: "team-notes-2",
      description: "x",
      provider: { kind: "document", maxBytes: 16_384 },
    });
  });

  it("refuses bad ids, descriptions, providers and limits, naming the field", () => {
    expect(refusal(() => defineMemory({ id: "Notes", description: "x" }))).toMatchObject({
      code: "memory_invalid",
      path: "id",
    });
    expect(refusal(() => defineMemory({ id: "a--b", description: "x" })).path).toBe("id");
    expect(refusal(() => defineMemory({ id: "a".repeat(129), description: "x" })).path).toBe("id");
    expect(refusal(() => defineMemory({ id: "notes", description: " " })).path).toBe("description");
    expect(
      refusal(() =>
        defineMemory({
          id: "notes",
          description: "x",
          provider: { kind: "document", maxBytes: 5 } as never,
        }),
      ).path,
    ).toBe("provider");
    expect(refusal(() => documentMemory({ maxBytes: 0 })).path).toBe("provider.maxBytes");
    expect(refusal(() => documentMemory({ maxBytes: 16_385 })).path).toBe("provider.maxBytes");
    expect(refusal(() => documentMemory({ maxBytes: 1.5 })).path).toBe("provider.maxBytes");
    const typo = refusal(() => defineMemory({ id: "notes", descripton: "x" } as never));
    expect(typo.path).toBe("descripton");
    expect(typo.message).toMatch(/did you mean "description"/);
  });

  it("declares HTTP memory over a connection; the secret stays a reference", () => {
    const knowledge = defineMemory({
      id: "knowledge",
      description: "Verified facts.",
      provider: httpMemory({
        connection,
        path: "/oc-memory",
        tools: [
          {
            name: "remember",
            description: "Save a fact.",
            access: "write",
            input: { type: "object", properties: { fact: { type: "string" } }, required: ["fact"] },
          },
        ],
      }),
    });
    const declared = memoryDeclaration(knowledge);
    expect(declared.provider).toMatchObject({
      kind: "http",
      path: "/oc-memory",
      maxBytes: 8192,
      connection: {
        id: "memory-service",
        headers: { authorization: { secret: "MEMORY_TOKEN", prefix: "Bearer " } },
      },
      tools: [{ name: "remember", access: "write", idempotent: false }],
    });
    expect(JSON.stringify(declared)).not.toMatch(/MEMORY_TOKEN["']?\s*:\s*"[^"]/);
  });

  it("refuses HTTP providers that could not work, naming the field", () => {
    expect(refusal(() => httpMemory({ connection: {} as never })).path).toBe("provider.connection");
    expect(refusal(() => httpMemory({ connection, path: "/elsewhere" })).path).toBe(
      "provider.path",
    );
    expect(refusal(() => httpMemory({ connection, path: "/oc-memory?x=1" })).path).toBe(
      "provider.path",
    );
    const getOnly = defineConnection({
      id: "ro",
      origin: "https://m.example.com",
      methods: ["GET"],
    });
    expect(refusal(() => httpMemory({ connection: getOnly })).path).toBe("provider.connection");
    const tool = {
      name: "t",
      description: "d",
      access: "read" as const,
      input: { type: "object" },
    };
    expect(
      refusal(() => httpMemory({ connection, path: "/oc-memory", tools: Array(9).fill(tool) }))
        .path,
    ).toBe("provider.tools");
    expect(
      refusal(() =>
        httpMemory({ connection, path: "/oc-memory", tools: [{ ...tool, name: "Bad" }] }),
      ).path,
    ).toBe("provider.tools[0].name");
    expect(
      refusal(() => httpMemory({ connection, path: "/oc-memory", tools: [tool, tool] })).path,
    ).toBe("provider.tools[1].name");
    // memory_save, memory_read and memory_list belong to document memory.
    const reserved = refusal(() =>
      httpMemory({ connection, path: "/oc-memory", tools: [{ ...tool, name: "save" }] }),
    );
    expect(reserved.path).toBe("provider.tools[0].name");
    expect(reserved.message).toContain("memory_save");
    expect(
      refusal(() =>
        httpMemory({
          connection,
          path: "/oc-memory",
          tools: [{ ...tool, access: "admin" as never }],
        }),
      ).path,
    ).toBe("provider.tools[0].access");
    expect(
      refusal(() =>
        httpMemory({
          connection,
          path: "/oc-memory",
          tools: [{ ...tool, input: { type: "string" } }],
        }),
      ).path,
    ).toBe("provider.tools[0].input");
    expect(
      refusal(() =>
        httpMemory({
          connection,
          path: "/oc-memory",
          tools: [{ ...tool, input: { type: "object", properties: { a: { $ref: "#/x" } } } }],
        }),
      ).path,
    ).toBe("provider.tools[0].input");
  });
});

describe("useMemory", () => {
  const notes = defineMemory({ id: "notes", description: "Notes." });
  const projection = {
    text: "Node 22",
    sources: [{ id: "workshop", title: "W", revision: "3", updatedAt: "2026-01-01T00:00:00.000Z" }],
    writable: true,
  };

  it("returns what the runtime recalled and records the selection once, by object or id", () => {
    let seen: unknown;
    const result = renderAgent(
      () => {
        seen = useMemory(notes);
        useMemory("notes");
        return "ok";
      },
      { input: { source: "user", text: "hi" }, memory: { notes: projection } },
    );
    expect(seen).toEqual(projection);
    expect(result.memory).toEqual(["notes"]);
  });

  it("an unbound resource fails the render with the resource named", () => {
    expect(() =>
      renderAgent(
        () => {
          useMemory(notes);
          return "ok";
        },
        { input: { source: "user" } },
      ),
    ).toThrow(RenderError);
    const other = (() => {
      try {
        renderAgent(
          () => {
            useMemory("other");
            return "x";
          },
          { input: { source: "user" }, memory: { notes: projection } },
        );
      } catch (error) {
        return error as RenderError;
      }
      return undefined;
    })();
    expect(other?.code).toBe("memory_not_bound");
    expect(other?.message).toMatch(/"other".*Bound resources: notes/);
    expect(() => useMemory(notes)).toThrow(/only run while rendering/);
  });
});
