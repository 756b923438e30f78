import { defineTool } from "@opencomputer/agent";
import { billingApi } from "../../../connections/billing-api";

export const refund = defineTool({
  name: "refund",
  description: "Refund a charge; a person approves it first",
  input: {
    type: "object",
    properties: { chargeId: { type: "string" } },
    required: ["chargeId"],
    additionalProperties: false,
  },
  preview: ({ input }) => ({
    title: `Refund ${String(input.chargeId)}`,
    facts: [{ label: "Charge", value: String(input.chargeId) }],
  }),
  async apply({ input, decision }) {
    // One decision, one refund: a retry of an unconfirmed apply carries the same decision.id,
    // so the billing API recognises it instead of refunding twice.
    const response = await billingApi.fetch("/v1/refunds", {
      method: "POST",
      headers: { "content-type": "application/json", "idempotency-key": decision.id },
      body: JSON.stringify(input),
    });
    if (!response.ok) throw new Error(`billing answered ${response.status}`);
    return { status: response.status };
  },
});
