// The CLI's one-line form of usage.recorded says what the step cost, or that it had no price.

import type { SessionEvent } from "@opencomputer/protocol";
import { describe, expect, it } from "vitest";
import { eventSummary } from "../src/format.ts";

const usage = (costUsd: number | null | undefined) =>
  ({
    seq: 7,
    id: "evt_1",
    sessionId: "ses_1",
    turnId: "trn_1",
    type: "usage.recorded",
    occurredAt: "2026-12-04T00:00:00.000Z",
    data: {
      model: "anthropic/claude-sonnet-4.6",
      inputTokens: 1200,
      outputTokens: 80,
      ...(costUsd === undefined ? {} : { costUsd }),
    },
  }) as unknown as SessionEvent;

describe("usage.recorded in the CLI", () => {
  it("shows the cost in dollars, 'no price' for an unknown model, nothing when not recorded", () => {
    expect(eventSummary(usage(0.0048))).toContain("in 1200 out 80, $0.0048");
    expect(eventSummary(usage(null))).toContain("in 1200 out 80, no price");
    expect(eventSummary(usage(undefined))).toMatch(/in 1200 out 80$/);
  });
});
