import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { EXECUTIONS, type Harness, harness, TEST_WORKERS, until } from "./harness.ts";

// The child runtime runs apply in the execution mode under test: in worker mode the apply runs
// in the child's worker, which exits with it (its IPC channel closes).
const AGENTS = fileURLToPath(new URL("./fixtures/approval-agent.ts", import.meta.url));

let h: Harness;
afterEach(async () => {
  await h?.close();
});

describe.each(EXECUTIONS)(
  "an approved write whose process is killed mid-apply (%s)",
  (execution) => {
    it("is unconfirmed after a restart and never runs again on its own", async () => {
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

      // Another process approves it and is SIGKILLed while apply runs.
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

      // A restarted runtime finds the apply unsettled past its limit: unconfirmed, not re-run.
      const restarted = h.newRuntime({ applyTimeoutMs: 100, leaseMs: 100, recoveryIntervalMs: 50 });
      await restarted.start();
      await until(
        async () => (await h.store.getApproval(approval.id))!.status === "unconfirmed",
        5000,
      );
      await new Promise((r) => setTimeout(r, 200));
      const lines = readFileSync(applyLog, "utf8").trim().split("\n");
      expect(lines).toHaveLength(1);
      const after = (await h.store.getApproval(approval.id))!;
      expect(after).toMatchObject({
        status: "unconfirmed",
        attempts: 1,
        decision: { id: lines[0], decidedBy: "child" },
      });
    });
  },
);
