import type { LanguageModelV3FunctionTool } from "@ai-sdk/provider";
import type { JsonValue } from "@opencomputer/agent";
import { isoNow } from "../clock.ts";
import { newId } from "../ids.ts";
import type { ToolCallRecord } from "../ports/records.ts";
import { settleTurn } from "./settle.ts";
import { commitFailure } from "./tool-call.ts";
import { type TurnScope, traceOf } from "./turn-scope.ts";
import { checkSchema } from "./validators.ts";

export const ASK_ID = "ask";

/** The seed's bounds: text 1–4000 characters; at most six options, label and value 1–80. */
export const ASK_INPUT_SCHEMA = {
  type: "object",
  properties: {
    text: { type: "string", minLength: 1, maxLength: 4000, description: "The question" },
    options: {
      type: "array",
      maxItems: 6,
      items: {
        type: "object",
        properties: {
          label: { type: "string", minLength: 1, maxLength: 80 },
          value: { type: "string", minLength: 1, maxLength: 80 },
        },
        required: ["label", "value"],
        additionalProperties: false,
      },
    },
  },
  required: ["text"],
  additionalProperties: false,
} as const;

export const ASK_MODEL_TOOL: LanguageModelV3FunctionTool = {
  type: "function",
  name: ASK_ID,
  description:
    "Ask the person a question and end this turn; their answer arrives as the next input. " +
    "Offer up to six options when the answer is a choice.",
  inputSchema: ASK_INPUT_SCHEMA as unknown as LanguageModelV3FunctionTool["inputSchema"],
};

/** `session.question` while a question is open. */
export interface OpenQuestion {
  id: string;
  turnId: string;
  callId: string;
  text: string;
  options: Array<{ label: string; value: string }>;
  askedAt: string;
  /** Inputs that arrived while the question was open; delivered with the answer as `steering`. */
  held: JsonValue[];
}

/**
 * Takes the model's `ask` call: a valid question becomes the turn's pending question (the turn
 * ends with it once the step's other calls settle); anything else fails back to the model.
 */
export async function takeAsk(scope: TurnScope, call: ToolCallRecord): Promise<void> {
  const invalid =
    typeof call.input === "string"
      ? "the arguments are not a JSON object"
      : checkSchema(ASK_INPUT_SCHEMA, call.input, "input");
  if (invalid) return commitFailure(scope, call, `Invalid question: ${invalid}`);
  if (scope.question)
    return commitFailure(scope, call, "A session has at most one open question; ask one at a time");
  const input = call.input as { text: string; options?: Array<{ label: string; value: string }> };
  scope.question = {
    call,
    question: {
      id: newId("q"),
      turnId: scope.turn.id,
      callId: call.callId,
      text: input.text,
      options: input.options ?? [],
      askedAt: isoNow(),
      held: [],
    },
  };
}

/** Ends the turn with its question: the call completes, `session.question` opens, all in one write. */
export async function endWithQuestion(scope: TurnScope): Promise<void> {
  const pending = scope.question!;
  const { question, call } = pending;
  const output = { questionId: question.id, asked: true };
  const now = isoNow();
  const data = question as unknown as JsonValue;
  await settleTurn(
    scope.ctx,
    scope.turn,
    { status: "completed", outcome: "question" },
    {
      fence: scope.fence,
      trace: traceOf(scope),
      completes: new Set([call.callId]),
      ops: [
        { type: "toolCall.upsert", call: { ...call, status: "completed", output, settledAt: now } },
        { type: "session.update", patch: { question: data } },
      ],
      events: [
        {
          type: "tool.completed",
          turnId: scope.turn.id,
          data: { tool: ASK_ID, callId: call.callId, title: ASK_ID, output },
        },
        {
          type: "question.asked",
          turnId: scope.turn.id,
          data: {
            questionId: question.id,
            text: question.text,
            options: question.options,
            askedAt: question.askedAt,
          },
        },
      ],
    },
  );
}
