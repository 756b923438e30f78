// The tool examples from the documentation, verbatim apart from a stub `billing`
// connection, so the type of `defineTool` keeps accepting what the docs tell people to write.

import { afterEach, describe, expect, it, vi } from "vitest";
import { defineTool, type ToolRunContext } from "../src/index.ts";
import { isTool } from "../src/internal.ts";

interface Customer {
  name: string;
  plan: string;
  nextCharge: string;
}

// Stands in for the docs' `billing` connection: records each request, answers with a customer.
const billingCalls: { path: string; init: RequestInit | undefined }[] = [];
const billing = {
  async fetch(path: string, init?: RequestInit) {
    billingCalls.push({ path, init });
    return {
      ok: true,
      json: async (): Promise<Customer> => ({ name: "Ada", plan: "basic", nextCharge: "$10.00" }),
    };
  },
};

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

export const importCatalog = defineTool({
  name: "import_catalog",
  description: "Import the latest product catalog; use only when asked",
  async run({ signal, reportProgress }) {
    await reportProgress({ phase: "downloading" });
    const response = await fetch("https://example.com/catalog.json", {
      signal,
    });
    await reportProgress({ phase: "processing" });
    return { imported: response.ok };
  },
});

const checkResult = {
  type: "object",
  properties: {
    url: { type: "string" },
    status: { type: "integer" },
  },
  required: ["url", "status"],
  additionalProperties: false,
} as const;

export const checkUrl = defineTool({
  name: "check_url",
  description: "Check an HTTPS URL and report its HTTP status",
  input: {
    type: "object",
    properties: { url: { type: "string" } },
    required: ["url"],
    additionalProperties: false,
  },
  output: checkResult,
  result: true,
  async run({ input, signal }) {
    const url = new URL(String(input.url));
    if (url.protocol !== "https:") throw new Error("Use an HTTPS URL");
    const response = await fetch(url, { method: "HEAD", signal });
    return { url: response.url, status: response.status };
  },
});

export const attach = defineTool({
  name: "attach",
  description: "Move a customer onto a plan",
  input: {
    type: "object",
    required: ["customerId", "planId"],
    properties: {
      customerId: { type: "string" },
      planId: { type: "string" },
    },
  },
  // What the person sees. It may read; it must not write.
  async preview({ input, signal }) {
    const customer = await billing
      .fetch(`/customers/${String(input.customerId)}`, { signal })
      .then((response) => response.json());
    return {
      title: `Move ${customer.name} to ${String(input.planId)}`,
      facts: [
        { label: "Today", value: customer.plan },
        { label: "After", value: String(input.planId) },
        { label: "Charged now", value: customer.nextCharge },
      ],
    };
  },
  // Runs only once somebody approves, from the arguments on the card.
  async apply({ input, decision, signal }) {
    return billing.fetch("/subscriptions", {
      method: "POST",
      headers: { "Idempotency-Key": decision.id },
      body: JSON.stringify({
        customer: input.customerId,
        plan: input.planId,
      }),
      signal,
    });
  },
});

function runContext(input: Record<string, unknown>, progress: unknown[] = []): ToolRunContext {
  return {
    input,
    sessionId: "ses_1",
    messageId: "msg_1",
    toolCallId: "call_1",
    agentId: "support",
    async reportProgress(metadata) {
      progress.push(metadata);
    },
  };
}

afterEach(() => {
  vi.unstubAllGlobals();
});

describe("the documentation's tools", () => {
  it("are accepted as written", () => {
    for (const tool of [lookupOrder, importCatalog, checkUrl, attach])
      expect(isTool(tool)).toBe(true);
    expect(lookupOrder).toMatchObject({ kind: "run", result: false });
    expect(checkUrl).toMatchObject({ kind: "run", result: true, output: checkResult });
    expect(attach.kind).toBe("approval");
  });

  it("lookup_order runs", async () => {
    if (lookupOrder.kind !== "run") throw new Error("expected a run tool");
    await expect(lookupOrder.run(runContext({ orderId: "A1" }))).resolves.toEqual({
      orderId: "A1",
      status: "processing",
    });
  });

  it("import_catalog reports progress and passes the signal on", async () => {
    const fetchStub = vi.fn(async (_url: string, _init?: RequestInit) => new Response("[]"));
    vi.stubGlobal("fetch", fetchStub);
    const progress: unknown[] = [];
    const signal = new AbortController().signal;
    if (importCatalog.kind !== "run") throw new Error("expected a run tool");
    const result = await importCatalog.run({ ...runContext({}, progress), signal });
    expect(result).toEqual({ imported: true });
    expect(progress).toEqual([{ phase: "downloading" }, { phase: "processing" }]);
    expect(fetchStub.mock.calls[0]?.[1]?.signal).toBe(signal);
  });

  it("attach previews a card and applies with the decision id as idempotency key", async () => {
    if (attach.kind !== "approval") throw new Error("expected an approval tool");
    const input = { customerId: "cus_1", planId: "pro" };
    await expect(attach.preview({ input })).resolves.toEqual({
      title: "Move Ada to pro",
      facts: [
        { label: "Today", value: "basic" },
        { label: "After", value: "pro" },
        { label: "Charged now", value: "$10.00" },
      ],
    });
    const decision = { id: "dec_1", decidedAt: "2025-01-01T00:00:00Z" };
    await expect(attach.apply({ input, decision })).resolves.toMatchObject({ ok: true });
    const write = billingCalls.at(-1);
    expect(write?.path).toBe("/subscriptions");
    expect(write?.init?.method).toBe("POST");
    expect(write?.init?.headers).toEqual({ "Idempotency-Key": "dec_1" });
  });
});
