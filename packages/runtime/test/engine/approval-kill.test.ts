import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import {
  EXECUTIONS,
  type Harness,
  type HarnessExecution,
  harness,
  TEST_WORKERS,
  until,
} from "./harness.ts";

// The child runtime runs apply in the execution mode under test: in worker mode the apply runs
// in the child's worker, which exits with it (its IPC channel closes).
const AGENTS = fileURLToPath(new URL("./fixtures/approval-agent.ts", import.meta.url));

let h: Harness;
afterEach(async () => {
  await h?.close();
});

/**
 * Proposes an approval, then lets another process (named `runtimeId`, if given) approve it and
 * SIGKILLs that process while apply runs. Returns the approval's id and apply's log (a line per
 * start, the decision's id).
 */
async function killedMidApply(
  execution: HarnessExecution,
  runtimeId?: string,
): Promise<{ approvalId: string; applyLog: string }> {
  h = await harness({
    agentsModule: AGENTS,
    execution,
    workers: TEST_WORKERS,
    applyTimeoutMs: 100,
    leaseMs: 100,
  });
  const applyLog = join(h.dir, "apply.log");
  writeFileSync(applyLog, "");
  h.script("test", [
    { toolCalls: [{ name: "attach", input: { customerId: "c1", log: applyLog } }] },
    { text: "awaiting approval" },
  ]);
  const { sessionId } = await h.run("move c1");
  const approval = (await h.runtime.approvals.list(sessionId))[0]!;
  await h.runtime.close();

  const child = spawn(
    process.execPath,
    [
      "--import",
      "tsx",
      join(import.meta.dirname, "fixtures/apply-child.ts"),
      join(h.dir, "data.db"),
      h.dir,
      approval.id,
      execution,
      ...(runtimeId ? [runtimeId] : []),
    ],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  await new Promise<void>((done, fail) => {
    child.stdout!.on("data", (chunk) => String(chunk).includes("applying") && done());
    child.once("exit", (code) => fail(new Error(`child exited ${code} before applying`)));
  });
  child.kill("SIGKILL");
  await new Promise((r) => child.once("exit", r));
  expect((await h.store.getApproval(approval.id))!.status).toBe("applying");
  return { approvalId: approval.id, applyLog };
}

const starts = (applyLog: string) => readFileSync(applyLog, "utf8").trim().split("\n");

describe.each(EXECUTIONS)(
  "an approved write whose process is killed mid-apply (%s)",
  (execution) => {
    it("is unconfirmed after a restart and never runs again on its own", async () => {
      const { approvalId, applyLog } = await killedMidApply(execution);

      // A restarted runtime finds the apply unsettled past its limit: unconfirmed, not re-run.
      const restarted = h.newRuntime({ applyTimeoutMs: 100, leaseMs: 100, recoveryIntervalMs: 50 });
      await restarted.start();
      await until(
        async () => (await h.store.getApproval(approvalId))!.status === "unconfirmed",
        5000,
      );
      await new Promise((r) => setTimeout(r, 200));
      const lines = starts(applyLog);
      expect(lines).toHaveLength(1);
      const after = (await h.store.getApproval(approvalId))!;
      expect(after).toMatchObject({
        status: "unconfirmed",
        attempts: 1,
        decision: { id: lines[0], decidedBy: "child" },
      });
    });

    it("is unconfirmed at once when the runtime restarts under the same name", async () => {
      const { approvalId, applyLog } = await killedMidApply(execution, "rt_fixed");
      const claim = (await h.store.getApproval(approvalId))!.claimedBy!;
      expect(claim.startsWith("rt_fixed#")).toBe(true);

      // Same name, long limits: only knowing the claim is a dead start's can settle it soon.
      const restarted = h.newRuntime({
        runtimeId: "rt_fixed",
        applyTimeoutMs: 60_000,
        leaseMs: 30_000,
        recoveryIntervalMs: 50,
      });
      const started = Date.now();
      await restarted.start();
      await until(
        async () => (await h.store.getApproval(approvalId))!.status === "unconfirmed",
        5000,
      );
      console.log(`unconfirmed ${Date.now() - started} ms after the restart (${execution})`);
      await new Promise((r) => setTimeout(r, 300));
      expect(starts(applyLog)).toHaveLength(1);
      const unconfirmed = (await h.store.getApproval(approvalId))!;
      expect(unconfirmed).toMatchObject({ status: "unconfirmed", attempts: 1 });

      // A person retries: apply runs again (it hangs), with the same decision, under this start.
      void restarted.approvals.retry(approvalId).catch(() => {});
      await until(async () => starts(applyLog).length === 2, 5000);
      const [first, second] = starts(applyLog);
      expect(second).toBe(first);
      expect(second).toBe(unconfirmed.decision!.id);
      const retried = (await h.store.getApproval(approvalId))!;
      expect(retried).toMatchObject({ status: "applying", attempts: 2 });
      expect(retried.claimedBy).not.toBe(claim);
      expect(retried.claimedBy!.startsWith("rt_fixed#")).toBe(true);

      // This start's own apply is running: its recovery leaves it alone.
      await new Promise((r) => setTimeout(r, 300));
      expect((await h.store.getApproval(approvalId))!.status).toBe("applying");
      expect(starts(applyLog)).toHaveLength(2);
    });
  },
);
