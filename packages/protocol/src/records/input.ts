import {
  array,
  type Infer,
  json,
  named,
  object,
  oneOf,
  optional,
  type Shape,
  string,
} from "../shape.ts";
import {
  type ScheduleInput,
  scheduleInputShape,
  type WebhookInput,
  webhookInputShape,
} from "./triggers.ts";

export const INPUT_SOURCES = [
  "user",
  "system",
  "schedule",
  "webhook",
  "channel",
  "subagent",
  "event",
] as const;
export type InputSource = (typeof INPUT_SOURCES)[number];

export const answerShape = object({
  questionId: string(),
  text: optional(string()),
  value: optional(string()),
});
export type Answer = Infer<typeof answerShape>;

/** What `useInput()` returns and what a turn carries: the input of one turn. */
export interface AgentInput {
  source: InputSource;
  text?: string;
  payload?: Infer<ReturnType<typeof json>>;
  answer?: Answer;
  steering?: AgentInput[];
  /** With `source: "schedule"`: which schedule and occurrence started the session. */
  schedule?: ScheduleInput;
  /** With `source: "webhook"`: which webhook and request started the session. */
  webhook?: WebhookInput;
}

// Steering nests inputs; one level of shape is enough to check what the engine writes (held
// inputs are themselves plain inputs without steering).
const plainInput = object({
  source: oneOf(INPUT_SOURCES),
  text: optional(string()),
  payload: optional(json()),
  answer: optional(answerShape),
});

export const agentInputShape: Shape<AgentInput> = named(
  "AgentInput",
  object({
    source: oneOf(INPUT_SOURCES),
    text: optional(string()),
    payload: optional(json()),
    answer: optional(answerShape),
    steering: optional(array(plainInput)),
    schedule: optional(scheduleInputShape),
    webhook: optional(webhookInputShape),
  }),
) as Shape<AgentInput>;

/** The `input` of `POST /sessions/<id>/turns`: `source` defaults to `user`. */
export type TurnInput = Omit<AgentInput, "source" | "steering" | "schedule" | "webhook"> & {
  source?: InputSource;
};
