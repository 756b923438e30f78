import { describe, expect, it } from "vitest";
import { assertEvent, check, EVENT_TYPES, eventIssues, newEventIssues } from "../src/index.ts";
import {
  array,
  integer,
  json,
  literal,
  nullable,
  object,
  optional,
  record,
  string,
  union,
} from "../src/shape.ts";

describe("shapes", () => {
  const shape = object({
    name: string(),
    count: optional(integer()),
    tags: array(string()),
    extra: nullable(record(json())),
    kind: union([literal("a"), literal(1)]),
  });

  it("accepts a value that matches, optional fields absent", () => {
    expect(check(shape, { name: "x", tags: [], extra: null, kind: "a" })).toEqual([]);
  });

  it("names each field at fault: wrong type, missing, undeclared, nested", () => {
    const issues = check(shape, {
      count: 1.5,
      tags: ["a", 2],
      extra: { f: () => 1 },
      kind: "b",
      more: 1,
    });
    expect(issues.map((i) => i.path).sort()).toEqual(
      ["$.count", "$.extra.f", "$.kind", "$.more", "$.name", "$.tags[1]"].sort(),
    );
    expect(issues.find((i) => i.path === "$.more")?.message).toBe("not part of the protocol");
    expect(issues.find((i) => i.path === "$.name")?.message).toBe("missing");
  });

  it("refuses non-plain objects and non-finite numbers as JSON", () => {
    expect(check(json(), new Date())).toHaveLength(1);
    expect(check(json(), { n: Number.NaN })).toHaveLength(1);
    expect(check(json(), { a: [1, "x", null, { b: true }] })).toEqual([]);
  });
});

describe("events", () => {
  const envelope = {
    seq: 1,
    id: "evt_1",
    timestamp: "2026-01-01T00:00:00.000Z",
    sessionId: "ses_1",
  };

  it("accepts a well-formed event of every family", () => {
    const event = {
      ...envelope,
      type: "tool.completed",
      turnId: "trn_1",
      data: { tool: "t", callId: "c", title: "t", output: { ok: 1 }, result: true },
    };
    expect(eventIssues(event)).toEqual([]);
    expect(() => assertEvent(event)).not.toThrow();
  });

  it("refuses an unknown type, a drifted field and a bad envelope", () => {
    expect(eventIssues({ ...envelope, type: "session.failed", data: {} })[0]?.message).toMatch(
      /unknown event type/,
    );
    expect(
      eventIssues({ ...envelope, type: "turn.started", data: { resumed: false } })[0]?.path,
    ).toBe("$.data.resumed");
    expect(eventIssues({ ...envelope, seq: "1", type: "session.ended", data: {} })[0]?.path).toBe(
      "$.seq",
    );
    expect(() => assertEvent({ ...envelope, type: "turn.steered", data: {} })).toThrow(
      /turn.steered.*activeTurnId/,
    );
  });

  it("checks an event before it is stored", () => {
    expect(newEventIssues({ type: "session.ended", data: {} })).toEqual([]);
    expect(newEventIssues({ type: "session.ended", turnId: 3, data: {} })[0]?.path).toBe(
      "$.turnId",
    );
  });

  it("lists each type once, in the family its prefix names or a documented one", () => {
    expect(new Set(EVENT_TYPES).size).toBe(EVENT_TYPES.length);
    for (const type of EVENT_TYPES) expect(type).toMatch(/^[a-z]+\.[a-z_]+$/);
  });
});
