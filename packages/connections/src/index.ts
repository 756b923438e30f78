// Public surface of @opencomputer/connections: the control plane's side of connections — the
// egress gateway, egress tokens, and the secret store.

export {
  type EgressGrant,
  type EgressSourceRequest,
  gatewayEgressSource,
} from "./egress-source.ts";
export { envLocalSecrets, layeredSecrets, parseEnvValue } from "./env-local.ts";
export {
  type ConnectionResolver,
  createEgressGateway,
  type EgressEvent,
  type EgressEventSink,
  type EgressGateway,
  type EgressGatewayOptions,
  type ObservedEgress,
  type TokenRequest,
} from "./gateway.ts";
export { normalizeOrigin, normalizeOrigins } from "./origin-binding.ts";
export { echoForms, redactText, SECRET_MARKER } from "./redact.ts";
export { EgressRefusal } from "./refusal.ts";
export {
  FileSecretStore,
  projectSecretPaths,
  type ResolvedSecret,
  SECRET_ENVIRONMENTS,
  SECRET_VALUE_MAX_BYTES,
  SecretError,
  type SecretInfo,
  type SecretResolver,
  type SecretStore,
  type SetSecretOptions,
} from "./secret-store.ts";
export { type EgressClaims, TokenSigner } from "./token.ts";
