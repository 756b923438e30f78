import { type Infer, json, object, string } from "../shape.ts";

/** An immutable record of one successful result-tool call (GET /sessions/<id>/results). */
export const resultRecordShape = object({
  resultId: string(),
  agentId: string(),
  deploymentId: string(),
  sessionId: string(),
  turnId: string(),
  messageId: string(),
  toolCallId: string(),
  resultTool: string(),
  /** `sha256:` of the result tool's output schema. */
  schemaDigest: string(),
  dataDigest: string(),
  data: json(),
  createdAt: string(),
});
export type ResultRecord = Infer<typeof resultRecordShape>;
