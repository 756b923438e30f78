// The control plane's egress for `opencomputer dev`, `server` and one-shot `session`: the
// gateway on loopback, the project's secret store (plus `.env.local` in dev), and the
// connections recorded in each session's deployment. The runtime gets `source` as its `egress`
// option; the gateway's events go to the session's log through the runtime.

import { type Deployment, deploymentsDir, readDeployment } from "@opencomputer/build";
import {
  createEgressGateway,
  type EgressGatewayOptions,
  envLocalSecrets,
  FileSecretStore,
  gatewayEgressSource,
  layeredSecrets,
  projectSecretPaths,
} from "@opencomputer/connections";
import type { Runtime, Store } from "@opencomputer/runtime";

export interface ProjectEgressOptions {
  projectDir: string;
  /** dev and one-shot sessions: plain-http loopback origins and `.env.local` are allowed. */
  devMode: boolean;
  store: Pick<Store, "getSession">;
  /** The runtime, once created (it is created after the gateway, with the gateway's source). */
  runtime: () => Pick<Runtime, "sessions"> | undefined;
  /** Sees each outbound request before the origin is called (`opencomputer test --crash`). */
  observe?: EgressGatewayOptions["observe"];
}

export function projectEgress(options: ProjectEgressOptions) {
  const { projectDir } = options;
  const store = new FileSecretStore(projectSecretPaths(projectDir));
  const deployments = deploymentsDir(projectDir);
  // Deployments are immutable, so their connections are read once.
  const manifests = new Map<string, Deployment | undefined>();
  const gateway = createEgressGateway({
    devMode: options.devMode,
    secrets: options.devMode ? layeredSecrets(store, envLocalSecrets(projectDir)) : store,
    connections: ({ deploymentId }) => {
      if (!deploymentId) return [];
      if (!manifests.has(deploymentId))
        manifests.set(deploymentId, readDeployment(deployments, deploymentId));
      return manifests.get(deploymentId)?.connections ?? [];
    },
    events: async (sessionId, event) => {
      await options.runtime()?.sessions.recordEgress(sessionId, event);
    },
    ...(options.observe ? { observe: options.observe } : {}),
    log: {
      error: (message, fields) =>
        process.stderr.write(`${JSON.stringify({ level: "error", message, ...fields })}\n`),
    },
  });
  const listening = gateway.listen();
  const issue = gatewayEgressSource(
    gateway,
    async (id) => (await options.store.getSession(id))?.environment,
  );
  return {
    gateway,
    /** The runtime's `egress` option. */
    source: async (request: Parameters<typeof issue>[0]) => {
      await listening;
      return issue(request);
    },
    async close(): Promise<void> {
      await listening.catch(() => {});
      await gateway.close();
    },
  };
}
