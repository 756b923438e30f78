import { createHash } from "node:crypto";

/**
 * The opaque key an HTTP memory provider partitions a namespace binding's data by: stable for a
 * project, environment, resource and namespace across sessions and deployments, different for
 * each of them. An identifier, not a secret.
 */
export function partitionKey(b: {
  projectId: string;
  environment: string;
  resource: string;
  id: string | null;
}): string {
  const digest = createHash("sha256")
    .update(JSON.stringify(["ocmem_v1", b.projectId, b.environment, b.resource, b.id]))
    .digest("base64url");
  return `ocmem_v1_${digest.slice(0, 32)}`;
}
