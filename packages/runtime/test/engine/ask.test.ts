// The ask tool, in both execution modes: the agent is in fixtures/ask-agents.ts; what its
// render saw of an answer is read from its marks (marks.ts).

import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { asker } from "./fixtures/ask-agents.ts";
import { clearMarks, marks } from "./fixtures/marks.ts";
import { EXECUTIONS, type Harness, harness, ofType, TEST_WORKERS } from "./harness.ts";

const AGENTS = fileURLToPath(new URL("./fixtures/ask-agents.ts", import.meta.url));

const ask = (input: Record<string, unknown>) => ({ toolCalls: [{ name: "ask", input }] });
const options = [
  { label: "Yes", value: "yes" },
  { label: "No", value: "no" },
];

let h: Harness;
const questions: string[] = [];
afterEach(async () => {
  await h?.close();
  for (const id of questions.splice(0)) clearMarks(id);
});

describe.each(EXECUTIONS)("ask (%s)", (execution) => {
  async function askedSession(steps: object[]) {
    h = await harness({
      agentsModule: AGENTS,
      execution,
      workers: TEST_WORKERS,
      steps: steps as never,
    });
    const first = await h.run("Please refactor the billing module", "asker");
    const session = await h.runtime.sessions.get(first.sessionId);
    return { ...first, session };
  }

  it("ends the turn with outcome question, opens session.question and logs question.asked", async () => {
    const { session, events, turnId } = await askedSession([
      ask({ text: "Go ahead?", options }),
      { text: "unused" },
    ]);
    const turn = session.turns[0]!;
    expect(turn).toMatchObject({ status: "completed", outcome: "question" });
    expect(session.question).toMatchObject({
      turnId,
      text: "Go ahead?",
      options,
      askedAt: expect.any(String),
    });
    const asked = ofType(events, "question.asked")[0]!;
    expect(asked.data).toMatchObject({
      questionId: (session.question as { id: string }).id,
      text: "Go ahead?",
      options,
    });
    expect(ofType(events, "tool.completed")[0]!.data.tool).toBe("ask");
    // Only one model step ran: the question ended the turn.
    expect(ofType(events, "agent.rendered")).toHaveLength(1);
  });

  it("delivers the answer as the next input, with inputs held meanwhile as steering, once", async () => {
    const { sessionId, session } = await askedSession([
      ask({ text: "Go ahead?", options }),
      { text: "Proceeding." },
    ]);
    const questionId = (session.question as { id: string }).id;
    questions.push(questionId);
    const held = await h.runtime.sessions.sendTurn(sessionId, { text: "also keep the old API" });
    expect(held.status).toBe("held");
    expect((await h.runtime.sessions.get(sessionId)).turns).toHaveLength(1);
    const answer = await h.runtime.sessions.sendTurn(sessionId, {
      answer: { questionId, value: "yes" },
    });
    expect(answer.status).toBe("queued");
    // A second answer (a double click) is the same turn.
    const again = await h.runtime.sessions.sendTurn(sessionId, {
      answer: { questionId, value: "no" },
    });
    expect(again).toMatchObject({ turnId: answer.turnId, duplicate: true });
    await h.runtime.sessions.waitForTurn(sessionId, answer.turnId);
    const after = await h.runtime.sessions.get(sessionId);
    expect(after.question).toBeNull();
    expect(after.turns.at(-1)!.input).toMatchObject({
      answer: { questionId, value: "yes" },
      steering: [{ source: "user", text: "also keep the old API" }],
    });
    const inputs = marks(questionId, "answer-inputs").map((l) => JSON.parse(l) as unknown);
    expect(inputs.at(-1)).toMatchObject({ answer: { value: "yes" } });
    const events = await h.events(sessionId);
    const rendered = ofType(events, "agent.rendered").at(-1)!;
    expect(rendered.data.instructions).toBe("The answer was yes. Proceed accordingly.");
    expect(ofType(events, "question.answered")).toHaveLength(1);
    // Held input went to the answer turn only.
    const messages = (await h.store.listMessages(sessionId)).filter((m) =>
      JSON.stringify(m.content).includes("old API"),
    );
    expect(messages).toHaveLength(1);
  });

  it("refuses an answer to no question or to another question", async () => {
    const { sessionId, session } = await askedSession([ask({ text: "Go?" }), { text: "ok" }]);
    await expect(
      h.runtime.sessions.sendTurn(sessionId, { answer: { questionId: "q_other", text: "yes" } }),
    ).rejects.toMatchObject({
      code: "question_mismatch",
      details: { path: "input.answer.questionId" },
    });
    const questionId = (session.question as { id: string }).id;
    questions.push(questionId);
    const { turnId } = await h.runtime.sessions.sendTurn(sessionId, {
      answer: { questionId, text: "yes" },
    });
    await h.runtime.sessions.waitForTurn(sessionId, turnId);
    await expect(
      h.runtime.sessions.sendTurn(sessionId, { answer: { questionId, text: "yes" } }),
    ).resolves.toMatchObject({
      duplicate: true,
    });
    await expect(
      h.runtime.sessions.sendTurn(sessionId, { answer: { questionId: "q_new", text: "x" } }),
    ).rejects.toMatchObject({ code: "no_open_question" });
  });

  it("bounds what is held while the question is open", async () => {
    const { sessionId } = await askedSession([ask({ text: "Go?" })]);
    for (let i = 0; i < 10; i++)
      await h.runtime.sessions.sendTurn(sessionId, { text: `note ${i}` });
    await expect(
      h.runtime.sessions.sendTurn(sessionId, { text: "one too many" }),
    ).rejects.toMatchObject({
      code: "steering_limit",
    });
  });

  it("checks the seed's bounds at each edge; a call out of bounds goes back to the model", async () => {
    const cases: Array<[Record<string, unknown>, boolean]> = [
      [{ text: "" }, false],
      [{ text: "x" }, true],
      [{ text: "x".repeat(4000) }, true],
      [{ text: "x".repeat(4001) }, false],
      [
        {
          text: "q",
          options: Array.from({ length: 6 }, (_, i) => ({ label: `L${i}`, value: `v${i}` })),
        },
        true,
      ],
      [
        {
          text: "q",
          options: Array.from({ length: 7 }, (_, i) => ({ label: `L${i}`, value: `v${i}` })),
        },
        false,
      ],
      [{ text: "q", options: [{ label: "l".repeat(80), value: "v".repeat(80) }] }, true],
      [{ text: "q", options: [{ label: "l".repeat(81), value: "v" }] }, false],
      [{ text: "q", options: [{ label: "l", value: "v".repeat(81) }] }, false],
      [{ text: "q", options: [{ label: "", value: "v" }] }, false],
    ];
    for (const [input, ok] of cases) {
      const { session, events } = await askedSession([ask(input), { text: "gave up asking" }]);
      expect({
        input: JSON.stringify(input).slice(0, 60),
        asked: session.question !== null,
      }).toEqual({
        input: JSON.stringify(input).slice(0, 60),
        asked: ok,
      });
      if (!ok)
        expect(ofType(events, "tool.failed")[0]!.data.message).toMatch(/^Invalid question: input/);
      await h.close();
    }
  });

  it("allows one question at a time", async () => {
    const { session, events } = await askedSession([
      {
        toolCalls: [
          { name: "ask", input: { text: "A?" } },
          { name: "ask", input: { text: "B?" } },
        ],
      },
    ]);
    expect(session.question).toMatchObject({ text: "A?" });
    expect(ofType(events, "tool.failed")[0]!.data.message).toMatch(/at most one open question/);
  });

  it("is closed by an interrupt", async () => {
    const { sessionId } = await askedSession([ask({ text: "Go?" })]);
    await h.runtime.sessions.interrupt(sessionId);
    expect((await h.runtime.sessions.get(sessionId)).question).toBeNull();
    expect(ofType(await h.events(sessionId), "question.closed")[0]!.data.reason).toBe(
      "interrupted",
    );
  });
});

// In-process only: a worker for a microvm session needs a sandbox (without one the turn fails
// deployment_invalid first); worker.test.ts checks ask in a sandboxed microvm worker.
describe("ask in-process", () => {
  it("cannot be selected by a microvm session", async () => {
    h = await harness({ agents: { asker }, steps: [ask({ text: "Go?" })] });
    const { session } = await h.runtime.sessions.create({
      agentId: "asker",
      executionMode: "microvm",
    });
    const { turnId } = await h.runtime.sessions.sendTurn(session.id, { text: "hi" });
    const turn = await h.runtime.sessions.waitForTurn(session.id, turnId);
    expect(turn.error).toMatchObject({
      code: "agent_failed",
      message: expect.stringMatching(/microvm.*cannot select ask/),
    });
  });
});
