import type { AgentInput, JsonValue } from "@opencomputer/agent";
import { jsonByteLength } from "@opencomputer/agent/internal";
import { newId } from "../ids.ts";
import type { SessionRecord } from "../ports/records.ts";
import type { NewEvent, WriteOp } from "../ports/store.ts";
import { ConflictError } from "./api-errors.ts";
import type { OpenQuestion } from "./ask.ts";

/** Inputs held while a question is open: at most this many, and this many bytes of JSON. */
export const HELD_LIMITS = { count: 10, bytes: 64 * 1024 } as const;

export type QuestionPlan =
  | { kind: "none" }
  | { kind: "held"; heldId: string; ops: WriteOp[]; events: NewEvent[] }
  | {
      kind: "answer";
      input: AgentInput;
      idempotencyKey: string;
      ops: WriteOp[];
      events: NewEvent[];
    };

/** The idempotency key of the turn that answers a question: one answer per question. */
export function answerKey(questionId: string): string {
  return `answer:${questionId}`;
}

export function openQuestion(session: SessionRecord): OpenQuestion | null {
  return (session.question as OpenQuestion | null) ?? null;
}

/**
 * What a new input means while a question may be open: an answer closes the question and
 * carries what was held as `steering`; anything else is held (bounded) until the answer comes.
 */
export function planQuestionInput(session: SessionRecord, input: AgentInput): QuestionPlan {
  const question = openQuestion(session);
  if (input.answer) {
    if (!question) {
      throw new ConflictError(
        "no_open_question",
        `Session ${session.id} has no open question to answer`,
        {
          path: "input.answer.questionId",
        },
      );
    }
    if (input.answer.questionId !== question.id) {
      throw new ConflictError(
        "question_mismatch",
        `The open question is ${question.id}, not ${input.answer.questionId}`,
        { path: "input.answer.questionId" },
      );
    }
    const steering = question.held as unknown as AgentInput[];
    return {
      kind: "answer",
      input: steering.length > 0 ? { ...input, steering } : input,
      // One answer per question: a second one (a double click, a retry) returns the first turn.
      idempotencyKey: answerKey(question.id),
      ops: [{ type: "session.update", patch: { question: null } }],
      events: [
        { type: "question.answered", data: { questionId: question.id, held: steering.length } },
      ],
    };
  }
  if (!question) return { kind: "none" };
  const held = [...question.held, input as unknown as JsonValue];
  if (held.length > HELD_LIMITS.count) {
    throw new ConflictError(
      "steering_limit",
      `Question ${question.id} is open and already holds ${HELD_LIMITS.count} inputs; answer it first`,
      { path: "input" },
    );
  }
  const bytes = jsonByteLength(held);
  if (bytes > HELD_LIMITS.bytes) {
    throw new ConflictError(
      "steering_limit",
      `Inputs held for question ${question.id} would be ${bytes} bytes; the limit is ${HELD_LIMITS.bytes}`,
      { path: "input" },
    );
  }
  const heldId = newId("held");
  return {
    kind: "held",
    heldId,
    ops: [
      {
        type: "session.update",
        patch: { question: { ...question, held } as unknown as JsonValue },
      },
    ],
    events: [
      {
        type: "message.received",
        data: { input, mode: "queue", heldFor: question.id, heldId },
      },
    ],
  };
}

/** Closes an open question without an answer (interrupt, end). */
export function closeQuestion(
  session: SessionRecord,
  reason: string,
): { ops: WriteOp[]; events: NewEvent[] } {
  const question = openQuestion(session);
  if (!question) return { ops: [], events: [] };
  return {
    ops: [{ type: "session.update", patch: { question: null } }],
    events: [{ type: "question.closed", data: { questionId: question.id, reason } }],
  };
}
