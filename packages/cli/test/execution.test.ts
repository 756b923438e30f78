import { chmodSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bwrapAvailable } from "@opencomputer/workers";
import { afterEach, describe, expect, it } from "vitest";
import { cliExecution } from "../src/execution.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function project(mode: number): string {
  const dir = mkdtempSync(join(tmpdir(), "oc-exec-"));
  dirs.push(dir);
  const inner = join(dir, "project");
  mkdirSync(inner);
  chmodSync(dir, mode);
  return inner;
}

describe("where dev and server run agent code", () => {
  it("defaults to workers, sandboxed where bubblewrap can reach the project", () => {
    const choice = cliExecution(project(0o755), {});
    expect(choice.options.execution).toBe("worker");
    if (bwrapAvailable()) {
      expect(choice.options.workers?.sandbox).toBeTypeOf("function");
      expect(choice.description).toMatch(/sandboxed/);
    }
  });

  it("falls back to plain workers, saying why, when asked or when the sandbox cannot reach it", () => {
    const off = cliExecution(project(0o755), { OPENCOMPUTER_SANDBOX: "0" });
    expect(off.options).toEqual({ execution: "worker" });
    expect(off.description).toContain("OPENCOMPUTER_SANDBOX=0");
    if (process.getuid?.() === 0 && bwrapAvailable()) {
      const hidden = cliExecution(project(0o700), {});
      expect(hidden.options).toEqual({ execution: "worker" });
      expect(hidden.description).toMatch(/is not searchable by other users/);
    }
  });

  it("sandboxed workers reach only the egress gateway unless OPENCOMPUTER_WORKER_NETWORK=host", () => {
    if (!bwrapAvailable()) return;
    const closed = cliExecution(project(0o755), {});
    expect(closed.options.workers?.network).toBeUndefined();
    expect(closed.description).toContain("the egress gateway only");
    const open = cliExecution(project(0o755), { OPENCOMPUTER_WORKER_NETWORK: "host" });
    expect(open.options.workers?.network).toBe("host");
    expect(open.description).toContain("OPENCOMPUTER_WORKER_NETWORK=host");
    expect(() => cliExecution(project(0o755), { OPENCOMPUTER_WORKER_NETWORK: "on" })).toThrow(
      expect.objectContaining({ code: "usage", details: { path: "OPENCOMPUTER_WORKER_NETWORK" } }),
    );
  });

  it("in-process on request; anything else is a usage error naming the variable", () => {
    expect(cliExecution(project(0o755), { OPENCOMPUTER_EXECUTION: "in-process" }).options).toEqual({
      execution: "in-process",
    });
    expect(() => cliExecution(project(0o755), { OPENCOMPUTER_EXECUTION: "vm" })).toThrow(
      expect.objectContaining({ code: "usage", details: { path: "OPENCOMPUTER_EXECUTION" } }),
    );
  });
});
