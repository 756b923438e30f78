import type {
  ApiErrorDetail,
  ApprovalView,
  Session,
  SessionEvent,
  SessionListRow,
  SessionStatus,
  TurnInput,
} from "./types.ts";

/**
 * `GET /agents` rows as the console reads them. The catalog's shapes belong to the server that
 * serves them (`@opencomputer/build`'s catalog today); fields beyond `id` are optional so a
 * catalog without aliases or history still lists its agents.
 */
export interface AgentSummary {
  id: string;
  /** Alias name → deployment id (null: nothing deployed under that alias yet). */
  aliases?: Record<string, string | null>;
  deployment?: DeploymentSummary;
  /** Every move of the aliases, oldest first, when the server keeps them. */
  history?: AliasMove[];
}

export interface AliasMove {
  alias: string;
  deploymentId: string;
  /** What the alias named before this move (null for its first). */
  previous: string | null;
  at: string;
  /** `build`, `deploy` or `rollback`. */
  reason: string;
}

export interface DeploymentSummary {
  id: string;
  agentId: string;
  createdAt: string;
  tools?: Array<{ name: string; kind?: string; result?: boolean; description?: string }>;
  resultTool?: string | null;
  /** Aliases pointing at it now, when the server says so. */
  aliases?: string[];
}

export type FetchLike = (input: string, init?: RequestInit) => Promise<Response>;

export interface ApiOptions {
  /** Where the management API is mounted: `""` (same origin), `"/api"`, `"http://host:4600"`. */
  basePath: string;
  /** A fetch to use instead of the global one (to add auth, or in tests). */
  fetch?: FetchLike;
  /** Headers sent with every call, e.g. `{ "x-api-key": key }`. */
  headers?: Record<string, string>;
}

/** A failed call, carrying the API's stable `code` (or `network` when no answer came). */
export class ApiError extends Error {
  readonly code: string;
  readonly status: number;
  readonly path: string | undefined;
  constructor(status: number, body: ApiErrorDetail) {
    super(body.message);
    this.name = "ApiError";
    this.code = body.code;
    this.status = status;
    this.path = body.path;
  }
}

export interface ListSessionsQuery {
  agent?: string;
  status?: SessionStatus | "";
  /** Only sessions waiting for a person (an open question, an approval to decide). */
  waiting?: boolean;
  limit?: number;
  cursor?: string;
}

/**
 * The management API as typed calls: the one client both `useAgent` and the console use. Every
 * failure is an ApiError; an unreachable server is `network` (status 0) so callers can retry.
 */
export function createApi(options: ApiOptions) {
  const base = options.basePath.replace(/\/+$/, "");
  const doFetch: FetchLike = options.fetch ?? ((input, init) => globalThis.fetch(input, init));

  async function call<T>(
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<T> {
    let response: Response;
    try {
      response = await doFetch(base + path, {
        method,
        headers: {
          accept: "application/json",
          ...(body === undefined ? {} : { "content-type": "application/json" }),
          ...options.headers,
          ...headers,
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    } catch (error) {
      throw new ApiError(0, {
        code: "network",
        message: `Cannot reach the server: ${String(error)}`,
      });
    }
    return answer<T>(method, path, response);
  }

  /** The JSON body of a response; an ApiError (the API's `code` when it sent one) if not ok. */
  async function answer<T>(method: string, path: string, response: Response): Promise<T> {
    const text = await response.text();
    let parsed: unknown = null;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      // A proxy's HTML error page: reported below by status.
    }
    if (!response.ok) {
      const err = (parsed as { error?: ApiErrorDetail } | null)?.error;
      throw new ApiError(
        response.status,
        err && typeof err.code === "string"
          ? err
          : {
              code: `http_${response.status}`,
              message: `${method} ${path} answered ${response.status}`,
            },
      );
    }
    return parsed as T;
  }

  const enc = encodeURIComponent;
  return {
    listSessions(query: ListSessionsQuery = {}) {
      const params = new URLSearchParams();
      if (query.agent) params.set("agent", query.agent);
      if (query.status) params.set("status", query.status);
      if (query.waiting) params.set("waiting", "true");
      if (query.limit) params.set("limit", String(query.limit));
      if (query.cursor) params.set("cursor", query.cursor);
      const qs = params.toString();
      return call<{ sessions: SessionListRow[]; nextCursor: string | null }>(
        "GET",
        `/sessions${qs ? `?${qs}` : ""}`,
      );
    },
    /** `GET /agents` (`{id, aliases}` rows); an empty list on a server that has no catalog. */
    async listAgents(): Promise<AgentSummary[]> {
      try {
        const { agents } = await call<{ agents: AgentSummary[] }>("GET", "/agents");
        return agents;
      } catch (error) {
        if (error instanceof ApiError && error.status === 404) return [];
        throw error;
      }
    },
    /** `GET /deployments[?agent=]`, newest first; empty on a server that has no catalog. */
    async listDeployments(agent?: string): Promise<DeploymentSummary[]> {
      try {
        const qs = agent ? `?agent=${enc(agent)}` : "";
        const { deployments } = await call<{ deployments: DeploymentSummary[] }>(
          "GET",
          `/deployments${qs}`,
        );
        return deployments;
      } catch (error) {
        if (error instanceof ApiError && error.status === 404) return [];
        throw error;
      }
    },
    /** Moves an alias of the agent back to an earlier deployment (`to`; default the previous). */
    rollback: (agentId: string, body: { alias: string; to?: string }) =>
      call<Record<string, unknown>>("POST", `/agents/${enc(agentId)}/rollback`, body),
    /** Points an alias at one of the agent's deployments (a deploy of a build it already has). */
    moveAlias: (agentId: string, alias: string, deploymentId: string) =>
      call<Record<string, unknown>>("POST", `/agents/${enc(agentId)}/aliases/${enc(alias)}`, {
        deploymentId,
      }),
    updateLabels: (id: string, change: { set?: Record<string, string>; unset?: string[] }) =>
      call<{ session: Session }>("PATCH", `/sessions/${enc(id)}/labels`, change),
    getSession: (id: string) => call<Session>("GET", `/sessions/${enc(id)}`),
    createSession(
      body: { agentId: string; labels?: Record<string, string> },
      idempotencyKey?: string,
    ) {
      return call<{ session: { id: string; status: string }; deployment: { id: string } }>(
        "POST",
        "/sessions",
        body,
        idempotencyKey ? { "idempotency-key": idempotencyKey } : {},
      );
    },
    events: (id: string, after: number) =>
      call<{ events: SessionEvent[] }>("GET", `/sessions/${enc(id)}/events?after=${after}`),
    /**
     * `GET /sessions/<id>/events` as Server-Sent Events: the events after `after`, then live
     * ones, until `signal` aborts or the server ends the stream. Read with fetch rather than
     * EventSource, which cannot send headers such as `x-api-key`. Null when the answer is not a
     * stream (a server or proxy that does not stream, a fetch without response bodies): the
     * caller polls instead.
     */
    async streamEvents(id: string, after: number, signal: AbortSignal): Promise<Response | null> {
      const path = `/sessions/${enc(id)}/events?after=${after}`;
      let response: Response;
      try {
        response = await doFetch(base + path, {
          method: "GET",
          headers: { accept: "text/event-stream", ...options.headers },
          signal,
        });
      } catch (error) {
        throw new ApiError(0, {
          code: "network",
          message: `Cannot reach the server: ${String(error)}`,
        });
      }
      // A refusal (401, 404 …) carries the same error body as every other call.
      if (!response.ok) return answer<null>("GET", path, response);
      const type = response.headers.get("content-type") ?? "";
      if (!type.includes("text/event-stream") || response.body === null) {
        await response.body?.cancel();
        return null;
      }
      return response;
    },
    sendTurn(id: string, input: TurnInput, extra: { idempotencyKey?: string; mode?: string } = {}) {
      return call<{ turnId: string; status: string; duplicate: boolean }>(
        "POST",
        `/sessions/${enc(id)}/turns`,
        { input, ...extra },
      );
    },
    interrupt: (id: string) =>
      call<{ interruptedTurnIds: string[] }>("POST", `/sessions/${enc(id)}/interrupt`, {}),
    end: (id: string) => call<{ session: Session }>("POST", `/sessions/${enc(id)}/end`, {}),
    approvals: (id: string) =>
      call<{ approvals: ApprovalView[] }>("GET", `/sessions/${enc(id)}/approvals`),
    decide: (approvalId: string, decision: "approve" | "deny", decidedBy?: string) =>
      call<{ approval: ApprovalView }>("POST", `/approvals/${enc(approvalId)}/decision`, {
        decision,
        ...(decidedBy ? { decidedBy } : {}),
      }),
    retry: (approvalId: string) =>
      call<{ approval: ApprovalView }>("POST", `/approvals/${enc(approvalId)}/retry`, {}),
    dismiss: (approvalId: string) =>
      call<{ approval: ApprovalView }>("POST", `/approvals/${enc(approvalId)}/dismiss`, {}),
  };
}

export type Api = ReturnType<typeof createApi>;
