// A delegation killed at each of its steps (SIGKILL, delegation-child.ts), then resumed by a new
// runtime on the same SQLite file: every time there is exactly one child session, the child ran
// its task once (one turn), and the parent's call has exactly one answer, the child's.

import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { createSqliteStore } from "@opencomputer/store-sqlite";
import { afterAll, describe, expect, it } from "vitest";

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = join(HERE, "..", "..", "..", "..");
const CHILD = join(HERE, "delegation-child.ts");

const POINTS = [
  "parent-call-started",
  "child-created",
  "child-task-received",
  "subagent-started",
  "child-tool-ran",
  "child-answered",
  "parent-commit-cut",
  "parent-committed",
] as const;

function runChild(args: string[]) {
  const proc = spawn(process.execPath, ["--import", "tsx", CHILD, ...args], {
    cwd: ROOT,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  proc.stdout.setEncoding("utf8").on("data", (s: string) => (stdout += s));
  proc.stderr.setEncoding("utf8").on("data", (s: string) => (stderr += s));
  return new Promise<{
    code: number | null;
    signal: string | null;
    stdout: string;
    stderr: string;
  }>((resolve) => proc.on("close", (code, signal) => resolve({ code, signal, stdout, stderr })));
}

const root = mkdtempSync(join(tmpdir(), "oc-delegation-kill-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("a delegation killed at each step", () => {
  it.each(POINTS)(
    "killed at %s: one child, one run of its task, one answer",
    async (point) => {
      const dir = join(root, point);
      const dbPath = join(dir, "runtime.db");
      mkdirSync(join(dir, "opencomputer", "scripts"), { recursive: true });
      const script = (name: string, steps: unknown[]) =>
        writeFileSync(
          join(dir, "opencomputer", "scripts", `${name}.json`),
          JSON.stringify({ steps }),
        );
      script("planner", [
        { toolCalls: [{ name: "subagent_researcher", input: { task: "Size the audience" } }] },
        { text: "Plan written." },
      ]);
      script("researcher", [
        { toolCalls: [{ name: "note", input: { text: "developers" } }] },
        { text: "About 2 million developers." },
      ]);
      writeFileSync(join(dir, "side-effects.log"), "");

      const killed = await runChild([dbPath, dir, "run", point]);
      expect(killed.signal, `${point} was not reached:\n${killed.stdout}${killed.stderr}`).toBe(
        "SIGKILL",
      );
      const resumed = await runChild([dbPath, dir, "recover"]);
      expect(resumed.code, resumed.stderr).toBe(0);
      const { parentId, status } = JSON.parse(resumed.stdout.trim().split("\n").pop()!);
      expect(status).toBe("completed");

      const store = createSqliteStore({ path: dbPath });
      try {
        const children = await store.listSessions({ agentId: "researcher", limit: 10 });
        expect(children).toHaveLength(1);
        const child = children[0]!;
        const childTurns = await store.listTurns(child.id);
        expect(childTurns.map((t) => [t.input.source, t.status])).toEqual([
          ["subagent", "completed"],
        ]);
        const parentEvents = await store.readEvents(parentId, 0, 500);
        const completed = parentEvents.filter(
          (e) => e.type === "tool.completed" && e.data.tool === "subagent_researcher",
        );
        expect(completed).toHaveLength(1);
        expect(completed[0]!.data).toMatchObject({
          output: {
            agentId: "researcher",
            sessionId: child.id,
            text: "About 2 million developers.",
          },
        });
        expect(parentEvents.filter((e) => e.type === "subagent.completed")).toHaveLength(1);
        expect(parentEvents.filter((e) => e.type === "tool.failed")).toEqual([]);
        const calls = await store.listToolCalls(parentId);
        expect(calls.map((c) => [c.tool, c.status])).toEqual([
          ["subagent_researcher", "completed"],
        ]);
        expect(child.id).toBe(
          (parentEvents.find((e) => e.type === "subagent.started")!.data as { sessionId: string })
            .sessionId,
        );
        const childEvents = await store.readEvents(child.id, 0, 500);
        const created = childEvents.find((e) => e.type === "session.created")!;
        expect(created.data).toMatchObject({
          parent: { sessionId: parentId, callId: calls[0]!.callId },
        });
        // The child's own tool is at-least-once like any tool: run again only when cut mid-call.
        const runs = readFileSync(join(dir, "side-effects.log"), "utf8").trim().split("\n");
        expect(runs.length).toBeGreaterThanOrEqual(1);
        expect(new Set(runs).size).toBe(1);
      } finally {
        await store.close();
      }
    },
    60_000,
  );
});
