// Tool schemas are compiled once, wherever the tool's code runs. A render from a worker process
// arrives as new objects on every call; compiling per object would compile each call's schema
// again, and ajv keeps every schema it compiled, so a server's memory would grow per call.
import { fileURLToPath } from "node:url";
import { Ajv2020 } from "ajv/dist/2020.js";
import { afterEach, describe, expect, it, vi } from "vitest";
import { checkSchema, validatorFor } from "../../src/engine/validators.ts";
import { EXECUTIONS, type Harness, harness, ofType, TEST_WORKERS } from "./harness.ts";

const AGENTS = fileURLToPath(new URL("./fixtures/worker-agents.ts", import.meta.url));

// Both dialects' compilers inherit `compile` from ajv's core class.
const core = Object.getPrototypeOf(Ajv2020.prototype) as { compile: (schema: object) => unknown };

const orderSchema = () => ({
  type: "object",
  properties: { orderId: { type: "string" } },
  required: ["orderId"],
});

describe("validatorFor", () => {
  it("gives schemas with the same JSON one compiled validator", () => {
    const compile = vi.spyOn(core, "compile");
    try {
      const first = validatorFor(orderSchema());
      expect(validatorFor(orderSchema())).toBe(first);
      expect(validatorFor(structuredClone(orderSchema()))).toBe(first);
      const other = validatorFor({ ...orderSchema(), required: [] });
      expect(other).not.toBe(first);
      expect(compile.mock.calls.length).toBeLessThanOrEqual(2);
    } finally {
      compile.mockRestore();
    }
  });

  it("still validates in each dialect and names the failing path", () => {
    expect(checkSchema(orderSchema(), { orderId: 1 }, "input")).toBe(
      "input.orderId must be string",
    );
    const draft07 = {
      $schema: "http://json-schema.org/draft-07/schema#",
      type: "object",
      properties: { n: { type: "integer" } },
    };
    expect(checkSchema(draft07, { n: 1.5 }, "$")).toBe("$.n must be integer");
    expect(checkSchema(structuredClone(draft07), { n: 2 }, "$")).toBeNull();
  });
});

describe.each(EXECUTIONS)("tool input validation with agent code %s", (execution) => {
  let h: Harness;
  afterEach(async () => {
    await h?.close();
  });

  it("compiles the tool's schema for the first call only", async () => {
    h = await harness({
      agentsModule: AGENTS,
      execution,
      workers: TEST_WORKERS,
      steps: [
        { toolCalls: [{ name: "lookup_order", input: { orderId: "A1" } }] },
        { text: "done" },
      ],
    });
    await h.run("first");
    const compile = vi.spyOn(core, "compile");
    try {
      for (const text of ["second", "third"]) {
        const { events } = await h.run(text);
        expect(ofType(events, "tool.completed")).toHaveLength(1);
      }
      expect(compile).not.toHaveBeenCalled();
    } finally {
      compile.mockRestore();
    }
  });
});
