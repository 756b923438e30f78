// The one scenario every latency benchmark plays: the support example's `lookup_order` agent,
// asked about an order. The model's two steps come from the example's own script
// (`examples/support/opencomputer/scripts/demo.json`), so the engine, the AI SDK and the bare loop
// all see the same texts and the same tool call.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

export const SUPPORT_DIR = fileURLToPath(new URL("../examples/support", import.meta.url));
export const AGENT_ID = "support";
export const SCRIPT_MODEL = "script/demo";
export const USER_TEXT = "Where is my order A1?";
export const INSTRUCTIONS = "Help customers check orders. Ask for an order ID before lookup.";

export const LOOKUP_ORDER_SCHEMA = {
  type: "object",
  properties: {
    orderId: { type: "string", description: "The customer order ID" },
  },
  required: ["orderId"],
  additionalProperties: false,
} as const;

export const LOOKUP_ORDER_DESCRIPTION = "Look up an order by ID and return its current status";

/** What the example's tool does, for the peers that cannot load it through the runtime. */
export async function lookupOrder(input: { orderId: string }) {
  return { orderId: String(input.orderId), status: "processing" };
}

interface ScriptFile {
  steps: {
    text?: string;
    toolCalls?: { name: string; input?: Record<string, unknown> }[];
  }[];
}

export interface Scenario {
  /** Text of the first step, which also calls the tool. */
  firstText: string;
  toolName: string;
  toolInput: { orderId: string };
  finalText: string;
}

export function loadScenario(): Scenario {
  const file = `${SUPPORT_DIR}/opencomputer/scripts/demo.json`;
  const script = JSON.parse(readFileSync(file, "utf8")) as ScriptFile;
  const [first, second] = script.steps;
  const call = first?.toolCalls?.[0];
  if (!first || !second || !call || typeof second.text !== "string") {
    throw new Error(
      `${file} no longer holds the two-step lookup_order script the benchmarks expect`,
    );
  }
  return {
    firstText: first.text ?? "",
    toolName: call.name,
    toolInput: { orderId: String(call.input?.orderId ?? "") },
    finalText: second.text,
  };
}
