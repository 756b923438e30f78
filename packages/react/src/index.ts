export {
  type AgentSummary,
  type AliasMove,
  type Api,
  ApiError,
  type ApiOptions,
  createApi,
  type DeploymentSummary,
  type FetchLike,
  type ListSessionsQuery,
} from "./api.ts";
export { AgentClient, type AgentClientOptions, type AgentSnapshot } from "./client.ts";
export {
  type AgentState,
  type Approval,
  emptyState,
  foldEvents,
  isBusy,
  type MemorySave,
  type Message,
  type Question,
  type SubagentLink,
  type TimelineItem,
  waitingFor,
} from "./fold.ts";
export {
  type EgressRequest,
  type InspectState,
  type Render,
  type RenderChange,
  renderChange,
  type TurnUsage,
  usageTotal,
} from "./fold-inspect.ts";
export type * from "./types.ts";
export { type UseAgentOptions, type UseAgentResult, useAgent } from "./use-agent.ts";
