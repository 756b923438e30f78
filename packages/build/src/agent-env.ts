// Project code (build-time loads and workers) never sees the server's environment: that is where
// API keys and provider credentials live. Configuration that is not a credential, such as the
// origin of a mock service in development, is passed by name: OPENCOMPUTER_AGENT_ENV lists the
// variables project code may read. Credentials belong in secrets (docs/connections.md), so names
// that look like one are refused rather than passed.

import { OpenComputerError } from "@opencomputer/agent";

export const AGENT_ENV_VARIABLE = "OPENCOMPUTER_AGENT_ENV";

const NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;
/** The runtime's own settings and names that usually hold a credential. */
const CREDENTIAL_LIKE =
  /^OPENCOMPUTER_|KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH|COOKIE|SESSION/i;

/**
 * The variables named in OPENCOMPUTER_AGENT_ENV (comma-separated) with their values in `env`;
 * a name that is not set is left out. A malformed or credential-like name is a usage error
 * naming it.
 */
export function agentEnv(env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const list = env[AGENT_ENV_VARIABLE];
  if (!list?.trim()) return {};
  const passed: Record<string, string> = {};
  for (const raw of list.split(",")) {
    const name = raw.trim();
    if (name === "") continue;
    if (!NAME.test(name)) {
      throw new OpenComputerError(
        "usage",
        `${AGENT_ENV_VARIABLE}: "${name}" is not a variable name`,
        {
          path: AGENT_ENV_VARIABLE,
        },
      );
    }
    if (CREDENTIAL_LIKE.test(name)) {
      throw new OpenComputerError(
        "usage",
        `${AGENT_ENV_VARIABLE}: ${name} looks like a credential or a runtime setting; project code gets credentials only through connections and secrets (opencomputer secrets set ${name.toUpperCase()})`,
        { path: AGENT_ENV_VARIABLE },
      );
    }
    const value = env[name];
    if (value !== undefined) passed[name] = value;
  }
  return passed;
}
