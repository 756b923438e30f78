import type { SessionListRow } from "@opencomputer/react";
import { describe, expect, it } from "vitest";
import { outcomeOf } from "../app/outcome.ts";
import { parseRoute } from "../app/route.ts";

// The console's pure pieces: how a list row words the last turn, and its hash routes.

type Turn = NonNullable<SessionListRow["activity"]["lastSettledTurn"]>;
const turn = (over: Partial<Turn>): Turn => ({
  id: "turn_1",
  input: { source: "user", text: "hi" },
  mode: "queue",
  status: "completed",
  outcome: "completed",
  error: null,
  createdAt: "2026-01-01T00:00:00Z",
  updatedAt: "2026-01-01T00:00:00Z",
  ...over,
});
const row = (last: Turn | null, over: Partial<SessionListRow> = {}) =>
  ({
    result: null,
    activity: { activeTurnId: null, queued: 0, lastSettledTurn: last },
    ...over,
  }) as SessionListRow;

describe("a list row's outcome", () => {
  it("words how the last turn ended", () => {
    expect(outcomeOf(row(null)).text).toBe("no turns yet");
    expect(
      outcomeOf(row(null, { activity: { activeTurnId: "t", queued: 0, lastSettledTurn: null } }))
        .text,
    ).toBe("working");
    expect(outcomeOf(row(turn({})))).toEqual({ text: "answered", tone: "ok" });
    expect(outcomeOf(row(turn({ outcome: "question" }))).text).toBe("asked a question");
    expect(outcomeOf(row(turn({ status: "cancelled", outcome: "interrupted" }))).text).toBe(
      "stopped",
    );
    expect(
      outcomeOf(
        row(turn({ status: "failed", error: { code: "tool_failed", message: "x", tool: "t" } })),
      ),
    ).toEqual({ text: "failed (tool_failed)", tone: "bad" });
    const result = { turnId: "turn_1", callId: "c", reportedAt: "", data: {} };
    expect(outcomeOf(row(turn({}), { result })).text).toBe("result reported");
  });
});

describe("hash routes", () => {
  it("parses sessions (with an agent filter), a session, agents and an agent", () => {
    expect(parseRoute("")).toEqual({ name: "sessions" });
    expect(parseRoute("#/?agent=helper")).toEqual({ name: "sessions", agent: "helper" });
    expect(parseRoute("#/sessions/ses_1")).toEqual({ name: "session", id: "ses_1" });
    expect(parseRoute("#/agents")).toEqual({ name: "agents" });
    expect(parseRoute("#/agents/my-agent.v2")).toEqual({ name: "agent", id: "my-agent.v2" });
    expect(parseRoute("#/agents/a/b")).toEqual({ name: "unknown" });
    expect(parseRoute("#/sessions/<script>")).toEqual({ name: "unknown" });
  });
});
