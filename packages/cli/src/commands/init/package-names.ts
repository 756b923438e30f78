// The names our packages are published under. The `@opencomputer` scope on the public registry
// is not this project's, so each workspace package `@opencomputer/<x>` is published as
// `opencomputer-runtime-<x>` and the CLI (`opencomputer`) as `opencomputer-runtime`. Every
// import keeps saying `@opencomputer/<x>`: a published package depends on its siblings through
// npm aliases (`"@opencomputer/protocol": "npm:opencomputer-runtime-protocol@0.1.0"`), and a
// project `init` writes depends on the SDK the same way, so npm installs each package once, in
// node_modules/@opencomputer/<x>, and the user's agent and the runtime share one copy.

const SCOPE = "@opencomputer/";
const PREFIX = "opencomputer-runtime";

/** The published name of a workspace package (`@opencomputer/agent`, `opencomputer`). */
export function publishedName(workspaceName: string): string {
  if (workspaceName === "opencomputer") return PREFIX;
  if (workspaceName.startsWith(SCOPE)) return `${PREFIX}-${workspaceName.slice(SCOPE.length)}`;
  throw new Error(`${workspaceName} is not one of this project's packages`);
}

/** The dependency spec that installs `workspaceName` at `version` under its own name. */
export function aliasSpec(workspaceName: string, version: string): string {
  return `npm:${publishedName(workspaceName)}@${version}`;
}
