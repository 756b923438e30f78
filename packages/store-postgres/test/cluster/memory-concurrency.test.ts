// Two runtimes on one PostgreSQL database (each with its own pool and LISTEN signal, as two
// servers would have) run six sessions at once, all bound read-write to one memory document.
// Each session's model appends its own line to the text it was shown. A barrier holds every
// first save until all six sessions have rendered, so all six start from the same revision: the
// revision check must let exactly one of them commit and hand the others a conflict with the
// current text, from which they save again. No update may be lost: the document ends with all
// six lines, after exactly six saves with six distinct revisions.
import { defineMemory, useInput, useMemory, useModel } from "@opencomputer/agent";
import { createModelResolver } from "@opencomputer/models";
import {
  createRuntime,
  createStaticAgents,
  type EventRecord,
  type Runtime,
  WHOLE_STEPS,
  type WholeStepsModel,
} from "@opencomputer/runtime";
import { type PrivateCluster, startPrivateCluster } from "@opencomputer/testkit/postgres-cluster";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createPostgresMemoryStore,
  createPostgresSignal,
  createPostgresStore,
  type PostgresSignal,
  type PostgresStore,
} from "../../src/index.ts";

const SESSIONS = 6;
const notes = defineMemory({ id: "notes", description: "A shared log; append your line." });

function writer() {
  const saved = useMemory(notes);
  useModel("fake/appender");
  return `Writer: ${useInput().text}\nNotes: ${JSON.stringify(saved.text)}`;
}

let cluster: PrivateCluster;
const opened: Array<{ store: PostgresStore; signal: PostgresSignal; runtime: Runtime }> = [];
const firstSteps: Array<() => void> = [];
let conflicts = 0;

/** All first saves wait here until every session has rendered once. */
function barrier(): Promise<void> {
  return new Promise((resolve) => {
    firstSteps.push(resolve);
    if (firstSteps.length === SESSIONS) for (const go of firstSteps) go();
  });
}

type CallOptions = Parameters<WholeStepsModel["doGenerate"]>[0];
type Content = Awaited<ReturnType<WholeStepsModel["doGenerate"]>>["content"][number];

/** A model (the provider boundary we fake): appends its writer's line to the notes it sees. */
function appender(): WholeStepsModel {
  const step = async (options: CallOptions) => {
    const system = options.prompt.find((m) => m.role === "system");
    const instructions = typeof system?.content === "string" ? system.content : "";
    const line = /Writer: (.*)/.exec(instructions)![1]!;
    const shown = JSON.parse(/Notes: (.*)/.exec(instructions)![1]!) as string;
    const last = options.prompt[options.prompt.length - 1]!;
    let base = shown;
    if (last.role === "tool") {
      const part = last.content[0] as unknown as {
        output: { value: { status: string; text?: string } };
      };
      const outcome = part.output.value;
      if (outcome.status === "saved") return answer([{ type: "text", text: "Appended." }]);
      expect(outcome.status).toBe("conflict");
      conflicts++;
      base = outcome.text!;
    } else {
      await barrier();
    }
    const text = base === "" ? line : `${base}\n${line}`;
    return answer([
      {
        type: "tool-call",
        toolCallId: "c",
        toolName: "memory_save",
        input: JSON.stringify({ text }),
      },
    ]);
  };
  const answer = (content: Content[]) => ({
    content,
    finishReason: { unified: "stop" as const, raw: undefined },
    usage: {
      inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
      outputTokens: { total: 1, text: 1, reasoning: 0 },
    },
    warnings: [],
  });
  return {
    specificationVersion: "v3",
    provider: "fake",
    modelId: "appender",
    supportedUrls: {},
    [WHOLE_STEPS]: true,
    doGenerate: step,
    doStream: () => {
      throw new Error("whole steps only");
    },
  } as WholeStepsModel;
}

async function openRuntime(url: string, runtimeId: string) {
  const store = await createPostgresStore({ connectionString: url });
  const signal = await createPostgresSignal({ connectionString: url });
  const runtime = createRuntime({
    store,
    signal,
    runtimeId,
    memory: createPostgresMemoryStore(store),
    agents: createStaticAgents({
      projectDir: "/nonexistent",
      agents: { writer },
      memory: { writer: [notes] },
    }),
    models: createModelResolver({ providers: { fake: () => appender() } }),
    execution: "in-process",
    log: { error: () => {}, warn: () => {} },
  });
  await runtime.start();
  opened.push({ store, signal, runtime });
  return runtime;
}

beforeAll(async () => {
  cluster = await startPrivateCluster();
}, 60_000);

afterAll(async () => {
  for (const o of opened) {
    await o.runtime.close();
    await o.signal.close();
    await o.store.close();
  }
  await cluster?.stop();
});

describe("memory across two runtimes on one database", () => {
  it("concurrent sessions writing one document lose no update", async () => {
    const url = cluster.connectionString(await cluster.createDatabase());
    const a = await openRuntime(url, "rt_a");
    const b = await openRuntime(url, "rt_b");
    const key = { projectId: "default", environment: "development", resource: "notes" };
    const initial = await a.memory!.create(key, { id: "log", title: "Shared log" });
    const bind = { notes: { scope: "document", id: "log", access: "read-write" } };

    const runs = await Promise.all(
      Array.from({ length: SESSIONS }, async (_, i) => {
        const runtime = i % 2 === 0 ? a : b;
        const { session } = await runtime.sessions.create({ agentId: "writer", memory: bind });
        const { turnId } = await runtime.sessions.sendTurn(session.id, { text: `line ${i}` });
        const turn = await runtime.sessions.waitForTurn(session.id, turnId, { timeoutMs: 30_000 });
        const events: EventRecord[] = await runtime.sessions.events(session.id);
        return { turn, events };
      }),
    );

    for (const { turn } of runs) expect([turn.status, turn.error]).toEqual(["completed", null]);
    const doc = await b.memory!.get(key, "log");
    expect(doc.text.split("\n").sort()).toEqual(
      Array.from({ length: SESSIONS }, (_, i) => `line ${i}`),
    );
    const saves = runs.flatMap(({ events }) => events.filter((e) => e.type === "memory.saved"));
    expect(saves).toHaveLength(SESSIONS);
    const revisions = saves.map((e) => (e.data as { revision: string }).revision);
    expect(new Set(revisions).size).toBe(SESSIONS);
    expect(Number(doc.revision)).toBe(Number(initial.revision) + SESSIONS);
    // All six first saves started from one revision: five of them had to conflict.
    expect(conflicts).toBeGreaterThanOrEqual(SESSIONS - 1);
  });
});
