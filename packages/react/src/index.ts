export {
  type Api,
  ApiError,
  type ApiOptions,
  createApi,
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
  type Message,
  type Question,
  type TimelineItem,
} from "./fold.ts";
export type * from "./types.ts";
export { type UseAgentOptions, type UseAgentResult, useAgent } from "./use-agent.ts";
