// Public surface of @opencomputer/build: the `build` and `doctor` commands, their library
// forms, and the runtime's resolver over the deployments they write.

export { AGENT_ENV_VARIABLE, agentEnv } from "./agent-env.ts";
export {
  type AgentAliases,
  ALIASES,
  type Alias,
  type AliasMove,
  isAlias,
  readAliases,
} from "./aliases.ts";
export { type BuildOptions, type BuildResult, buildProject } from "./build.ts";
export {
  type AgentSummary,
  createDeploymentCatalog,
  type DeploymentCatalog,
  type DeploymentSummary,
} from "./catalog.ts";
export {
  type AgentReport,
  type BuildTimings,
  type CheckOptions,
  type CheckResult,
  checkProject,
} from "./check.ts";
export { type BuildCommandOptions, type CommandIO, runBuildCommand } from "./command.ts";
export {
  type Deployment,
  type DeploymentTool,
  type ResultToolRecord,
  readDeployment,
  SKILLS_DIR,
} from "./deployment.ts";
export { createDeploymentAgents } from "./deployment-agents.ts";
export {
  BUILD_ERROR_CODES,
  BUILD_WARNING_CODES,
  type BuildError,
  type BuildErrorCode,
  type BuildWarning,
  type BuildWarningCode,
  formatErrors,
  formatWarnings,
} from "./errors.ts";
export {
  type BuildIsolation,
  buildIsolation,
  sandboxUnavailable,
  UNPRIVILEGED_ID,
} from "./isolation.ts";
export { assertToolsMatch, compareTools, type Mismatch, type ToolModules } from "./load-check.ts";
export { DEFAULT_LOAD_TIMEOUT_MS } from "./load-tools.ts";
export { deploymentsDir } from "./project.ts";
export {
  PROJECT_FILE,
  type ProjectAgent,
  type ProjectDeclaration,
  type ProjectDeclarationResult,
  readProjectDeclaration,
} from "./project-file.ts";
export {
  loadScenarioModules,
  type ScenarioLoadMessage,
  type ScenarioModules,
} from "./scenario-modules.ts";
export { createScheduleCatalog } from "./schedule-catalog.ts";
export { acceptUpload, MAX_BUNDLE_BYTES } from "./upload.ts";
