export type { EventDelivery } from "@opencomputer/protocol";
export { parseEventDelivery } from "./parse.ts";
export {
  SIGNATURE_TOLERANCE_SECONDS,
  type SignatureInput,
  signEventDelivery,
  type VerifyOptions,
  verifyEventDelivery,
} from "./signature.ts";
