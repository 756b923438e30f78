// sessions.projectOf answers from memory once it knows a session's project (it never changes),
// so the server's scope check on every `/sessions/:id…` request costs no store read.
import { fileURLToPath } from "node:url";
import { sessionRecord } from "@opencomputer/testkit/store-fixtures";
import { afterEach, describe, expect, it } from "vitest";
import { ProjectMemo } from "../../src/engine/project-of.ts";
import type { SessionRecord } from "../../src/ports/records.ts";
import type { Store } from "../../src/ports/store.ts";
import { type Harness, harness } from "./harness.ts";

const AGENTS = fileURLToPath(new URL("./fixtures/basics-agents.ts", import.meta.url));

describe("sessions.projectOf", () => {
  let h: Harness;
  afterEach(async () => {
    await h.close();
  });

  it("reads a session's project once per runtime, and never for one it created", async () => {
    const reads: string[] = [];
    h = await harness({
      agentsModule: AGENTS,
      wrapStore: (real) =>
        Object.assign(Object.create(real) as Store, {
          async getSession(sessionId: string) {
            reads.push(sessionId);
            return real.getSession(sessionId);
          },
        }),
    });
    const { session } = await h.runtime.sessions.create({ agentId: "support", projectId: "p1" });
    expect(await h.runtime.sessions.projectOf(session.id)).toBe("p1");
    expect(reads).toEqual([]);
    // Another runtime on the same store learns it from the store, once.
    const other = h.newRuntime();
    expect(await other.sessions.projectOf(session.id)).toBe("p1");
    expect(await other.sessions.projectOf(session.id)).toBe("p1");
    expect(reads).toEqual([session.id]);
    // An unknown id is not remembered: it stays not_found, and is looked up each time.
    await expect(other.sessions.projectOf("ses_missing")).rejects.toMatchObject({
      code: "not_found",
    });
    await expect(other.sessions.projectOf("ses_missing")).rejects.toMatchObject({
      code: "not_found",
    });
    expect(reads).toEqual([session.id, "ses_missing", "ses_missing"]);
  });
});

describe("ProjectMemo", () => {
  it("forgets its oldest entries past its limit", async () => {
    const sessions = new Map<string, SessionRecord>(
      ["a", "b", "c"].map((id) => [id, sessionRecord({ id, projectId: `p_${id}` })]),
    );
    const reads: string[] = [];
    const memo = new ProjectMemo(async (id) => {
      reads.push(id);
      return sessions.get(id)!;
    }, 2);
    expect(await memo.of("a")).toBe("p_a");
    expect(await memo.of("b")).toBe("p_b");
    expect(await memo.of("c")).toBe("p_c"); // "a" goes
    expect(await memo.of("b")).toBe("p_b");
    expect(await memo.of("a")).toBe("p_a");
    expect(reads).toEqual(["a", "b", "c", "a"]);
  });
});
