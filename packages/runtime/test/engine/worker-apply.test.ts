// An apply whose worker is lost (workers.md, "Crashes and hangs", 4): it may have happened, so
// the approval is unconfirmed and runs again only when a person retries, with the same
// decision.id, on a new worker. Worker mode only: in-process there is no worker to lose.

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { type Harness, harness, ofType, TEST_WORKERS } from "./harness.ts";

const AGENTS = fileURLToPath(new URL("./fixtures/worker-apply-agents.ts", import.meta.url));

let h: Harness;
afterEach(async () => {
  await h?.close();
});

describe("an apply whose worker is lost", () => {
  it("is unconfirmed, never re-run on its own; a retry applies on a new worker with the same decision.id", async () => {
    h = await harness({ agentsModule: AGENTS, execution: "worker", workers: TEST_WORKERS });
    const marker = join(h.dir, "applied-once");
    h.script("test", [
      { toolCalls: [{ name: "crash_apply", input: { marker } }] },
      { text: "awaiting approval" },
    ]);
    const { sessionId } = await h.run("apply it");
    const [approval] = await h.runtime.approvals.list(sessionId);
    expect(approval).toMatchObject({ status: "pending" });

    const lost = await h.runtime.approvals.decide(approval!.id, { decision: "approve" });
    expect(lost.status).toBe("unconfirmed");
    const [decisionId, crashedPid] = readFileSync(marker, "utf8").split(" ");
    expect(decisionId).toBe(lost.decision!.id);
    expect(Number(crashedPid)).not.toBe(process.pid);
    const events = await h.events(sessionId);
    expect(ofType(events, "approval.unconfirmed")).toHaveLength(1);
    expect(ofType(events, "approval.applied")).toHaveLength(0);

    const retried = await h.runtime.approvals.retry(approval!.id);
    expect(retried.status).toBe("applied");
    expect(retried.outcome).toMatchObject({ applied: lost.decision!.id });
    expect((retried.outcome as { pid: number }).pid).not.toBe(Number(crashedPid));
  });
});
