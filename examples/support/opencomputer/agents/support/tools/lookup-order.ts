import { defineTool } from "@opencomputer/agent";

export const lookupOrder = defineTool({
  name: "lookup_order",
  description: "Look up an order by ID and return its current status",
  input: {
    type: "object",
    properties: {
      orderId: { type: "string", description: "The customer order ID" },
    },
    required: ["orderId"],
    additionalProperties: false,
  },
  async run({ input }) {
    const orderId = String(input.orderId);
    return { orderId, status: "processing" };
  },
});
