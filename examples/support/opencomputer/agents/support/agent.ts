import { useModel, useTool } from "@opencomputer/agent";
import { lookupOrder } from "./tools/lookup-order";

export default function Agent() {
  useModel("anthropic/claude-sonnet-4.6");
  useTool(lookupOrder);
  return "Help customers check orders. Ask for an order ID before lookup.";
}
