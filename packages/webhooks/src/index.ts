export {
  DELIVERY_ID_HEADERS,
  deliveryKey,
  inputOf,
  MAX_WEBHOOK_BODY_BYTES,
  WebhookError,
} from "./delivery.ts";
export { newToken, TOKEN_PREFIX, tokenHash, tokenMatches } from "./token.ts";
export {
  type CreatedWebhook,
  publicRequest,
  type ReceiveResult,
  Webhooks,
  type WebhooksOptions,
} from "./webhooks.ts";
