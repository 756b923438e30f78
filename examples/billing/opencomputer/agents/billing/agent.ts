import { useModel, useTool } from "@opencomputer/agent";
import { charge } from "./tools/charge";
import { refund } from "./tools/refund";

export default function Agent() {
  useModel("anthropic/claude-sonnet-4.6");
  useTool(charge);
  useTool(refund);
  return "Charge customers when asked. Refunds need a person's approval: propose them with the refund tool.";
}
