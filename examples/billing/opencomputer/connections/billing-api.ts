import { bearer, defineConnection, useSecret } from "@opencomputer/agent";

// The key is a secret (`opencomputer secrets set BILLING_API_KEY`, or opencomputer/.env.local in
// development); agent code never sees it: the egress gateway adds the header per request.
// BILLING_API_ORIGIN points the example at a local mock (http://127.0.0.1:<port>, dev mode only);
// project code sees it when the operator passes it: OPENCOMPUTER_AGENT_ENV=BILLING_API_ORIGIN.
export const billingApi = defineConnection({
  id: "billing_api",
  origin: process.env.BILLING_API_ORIGIN ?? "https://billing.example.com",
  headers: { authorization: bearer(useSecret("BILLING_API_KEY")) },
  methods: ["GET", "POST"],
  pathPrefix: "/v1",
});
