import { questionOptionShape } from "../records/session.ts";
import { array, integer, object, string } from "../shape.ts";

/** `ask`: a turn ends with an open question; the next input answers or it is closed. */
export const questionEvents = {
  "question.asked": object({
    questionId: string(),
    text: string(),
    options: array(questionOptionShape),
    askedAt: string(),
  }),
  /** `held`: how many inputs were held while it was open (delivered with the answer). */
  "question.answered": object({ questionId: string(), held: integer() }),
  "question.closed": object({ questionId: string(), reason: string() }),
};
