import { defineTool } from "@opencomputer/agent";
import { billingApi } from "../../../connections/billing-api";

export const charge = defineTool({
  name: "charge",
  description: "Charge a customer an amount in cents",
  input: {
    type: "object",
    properties: {
      customerId: { type: "string" },
      amountCents: { type: "integer", minimum: 1 },
    },
    required: ["customerId", "amountCents"],
    additionalProperties: false,
  },
  async run({ input, sessionId, toolCallId }) {
    // A call may run again with the same toolCallId (at-least-once, e.g. after a crash), so the
    // downstream idempotency key comes from the call, never from a random value or the clock.
    const response = await billingApi.fetch("/v1/charges", {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "idempotency-key": `${sessionId}:${toolCallId}`,
      },
      body: JSON.stringify(input),
    });
    if (!response.ok) throw new Error(`billing answered ${response.status}`);
    return { status: response.status, charge: await response.json() };
  },
});
