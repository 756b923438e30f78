// Agent webhooks: management (create, list, enable/disable, rotate, remove) and ingress. A
// delivery is recorded once per (webhook, sender's delivery id) by the store's unique index;
// every copy of it then runs the same idempotent start (the session and turn keyed by the
// request id), so a replay, concurrent or later, answers with the first delivery's session and
// starts nothing.

import type { WebhookRecord, WebhookRequest } from "@opencomputer/protocol";
import {
  canonicalJson,
  NotFoundError,
  newId,
  type SessionsApi,
  type TriggerStore,
  type WebhookRequestRow,
  type WebhookRow,
} from "@opencomputer/runtime";
import { deliveryKey, inputOf, WebhookError } from "./delivery.ts";
import { newToken, tokenHash, tokenMatches } from "./token.ts";

export interface WebhooksOptions {
  store: TriggerStore;
  sessions: Pick<SessionsApi, "create" | "sendTurn">;
  /** Names this process in the claims it holds on requests it is starting. */
  holder: string;
  clock?: () => number;
  /** Path the ingress routes are served under, for the URLs shown (default `/agent-webhooks`). */
  basePath?: string;
  /** How long a start in progress is protected before another process retries it. */
  claimMs?: number;
  /** A request still not started after this many attempts is recorded `failed` (default 10). */
  maxAttempts?: number;
}

export interface CreatedWebhook {
  webhook: WebhookRecord;
  /** The URL with its token: shown on this answer only. */
  url: string;
  token: string;
}

export interface ReceiveResult {
  /** 202 for a new or replayed delivery. */
  status: number;
  request: WebhookRequest;
  duplicate: boolean;
}

const ENVIRONMENTS = new Set(["development", "production"]);
const NAME = /^[a-zA-Z0-9][a-zA-Z0-9_.-]{0,63}$/;

export function publicRequest(row: WebhookRequestRow): WebhookRequest {
  const { input: _input, attempts: _a, claimedBy: _c, claimExpiresAt: _e, ...request } = row;
  return request;
}

export class Webhooks {
  private readonly now: () => number;
  private readonly base: string;

  constructor(private readonly options: WebhooksOptions) {
    this.now = options.clock ?? Date.now;
    this.base = options.basePath ?? "/agent-webhooks";
  }

  private iso(): string {
    return new Date(this.now()).toISOString();
  }

  private record(row: WebhookRow): WebhookRecord {
    const { tokenHash: _hash, ...rest } = row;
    return { ...rest, url: `${this.base}/${row.id}` };
  }

  async create(input: {
    projectId: string;
    agentId: unknown;
    environment: unknown;
    name: unknown;
  }): Promise<CreatedWebhook> {
    if (typeof input.agentId !== "string" || input.agentId === "")
      throw new WebhookError("invalid_input", "agentId: must be an agent id", { path: "agentId" });
    if (typeof input.environment !== "string" || !ENVIRONMENTS.has(input.environment))
      throw new WebhookError("invalid_input", "environment: must be development or production", {
        path: "environment",
      });
    if (typeof input.name !== "string" || !NAME.test(input.name))
      throw new WebhookError("invalid_input", `name: must match ${NAME}`, { path: "name" });
    const token = newToken();
    const at = this.iso();
    const row: WebhookRow = {
      id: newId("wh", this.now()),
      projectId: input.projectId,
      environment: input.environment,
      agentId: input.agentId,
      name: input.name,
      enabled: true,
      tokenHash: tokenHash(token),
      createdAt: at,
      updatedAt: at,
      tokenRotatedAt: null,
    };
    await this.options.store.createWebhook(row);
    return { webhook: this.record(row), url: `${this.base}/${row.id}/${token}`, token };
  }

  async list(filter: {
    projectId: string;
    agentId?: string;
    environment?: string;
  }): Promise<WebhookRecord[]> {
    return (await this.options.store.listWebhooks(filter)).map((w) => this.record(w));
  }

  /** The webhook if it belongs to the project; `not_found` otherwise. */
  private async owned(id: string, projectId: string): Promise<WebhookRow> {
    const row = await this.options.store.getWebhook(id);
    if (!row || row.projectId !== projectId) throw new NotFoundError("webhook", id);
    return row;
  }

  async get(id: string, projectId: string): Promise<WebhookRecord> {
    return this.record(await this.owned(id, projectId));
  }

  async setEnabled(id: string, projectId: string, enabled: boolean): Promise<WebhookRecord> {
    await this.owned(id, projectId);
    await this.options.store.updateWebhook(id, { enabled, updatedAt: this.iso() });
    return this.get(id, projectId);
  }

  /** A new token; the old URL stops working at once. */
  async rotateToken(id: string, projectId: string): Promise<CreatedWebhook> {
    await this.owned(id, projectId);
    const token = newToken();
    const at = this.iso();
    await this.options.store.updateWebhook(id, {
      tokenHash: tokenHash(token),
      tokenRotatedAt: at,
      updatedAt: at,
    });
    return { webhook: await this.get(id, projectId), url: `${this.base}/${id}/${token}`, token };
  }

  async remove(id: string, projectId: string): Promise<void> {
    await this.owned(id, projectId);
    await this.options.store.deleteWebhook(id);
  }

  async requests(id: string, projectId: string, limit = 50): Promise<WebhookRequest[]> {
    await this.owned(id, projectId);
    return (await this.options.store.listWebhookRequests(id, limit)).map(publicRequest);
  }

  /**
   * A delivery: `not_found` for an unknown webhook or a wrong token (the same answer, so a
   * token cannot be probed), `webhook_disabled`, `invalid_json`, `idempotency_conflict` for a
   * delivery id reused with another body.
   */
  async receive(
    id: string,
    token: string | null,
    headers: Headers,
    body: Uint8Array,
  ): Promise<ReceiveResult> {
    const hook = await this.options.store.getWebhook(id);
    if (!hook || token === null || !tokenMatches(token, hook.tokenHash))
      throw new NotFoundError("webhook", id);
    if (!hook.enabled)
      throw new WebhookError(
        "webhook_disabled",
        `Webhook ${id} is disabled; enable it to accept deliveries`,
      );
    const key = deliveryKey(headers);
    const input = inputOf(body, hook.name);
    const now = this.now();
    const { request, created } = await this.options.store.insertWebhookRequest({
      id: newId("whr", now),
      webhookId: id,
      deliveryKey: key,
      input,
      receivedAt: new Date(now).toISOString(),
      claimedBy: this.options.holder,
      claimExpiresAt: now + this.claimMs(),
    });
    if (!created && canonicalJson(request.input) !== canonicalJson(input)) {
      throw new WebhookError(
        "idempotency_conflict",
        "This delivery id was already used with a different body",
        {
          path: key?.split(":")[0] ?? "Idempotency-Key",
        },
      );
    }
    // A delivery whose start had failed is started again by its retry, as senders expect.
    if (!created && request.outcome === "failed")
      await this.options.store.reopenWebhookRequest(request.id, new Date(now).toISOString());
    const current = (await this.options.store.getWebhookRequest(request.id)) ?? request;
    const settled = current.outcome === "pending" ? await this.start(hook, current) : current;
    return { status: 202, request: publicRequest(settled), duplicate: !created };
  }

  /** Starts requests whose starter died or failed (claims lapsed); run it every few seconds. */
  async resume(): Promise<number> {
    let started = 0;
    for (const lapsed of await this.options.store.lapsedWebhookRequests(this.now(), 50)) {
      const hook = await this.options.store.getWebhook(lapsed.webhookId);
      if (!hook) continue;
      await this.start(hook, lapsed);
      started++;
    }
    return started;
  }

  private claimMs(): number {
    return this.options.claimMs ?? 30_000;
  }

  /**
   * The idempotent start: the same session and turn however often, and wherever, it runs for
   * one request. Every copy of a delivery runs it (so each answers with the session), while the
   * claim only decides who counts attempts and gives up after `maxAttempts`.
   */
  private async start(hook: WebhookRow, request: WebhookRequestRow): Promise<WebhookRequestRow> {
    const now = this.now();
    const claimed = await this.options.store.claimWebhookRequest(
      request.id,
      this.options.holder,
      now,
      now + this.claimMs(),
    );
    const key = `webhook:${request.id}`;
    try {
      const { session } = await this.options.sessions.create({
        agentId: `${hook.agentId}@${hook.environment}`,
        environment: hook.environment,
        source: "webhook",
        projectId: hook.projectId,
        idempotencyKey: key,
      });
      const turn = await this.options.sessions.sendTurn(session.id, request.input, {
        idempotencyKey: key,
        origin: {
          webhook: { webhookId: hook.id, requestId: request.id, receivedAt: request.receivedAt },
        },
      });
      await this.options.store.settleWebhookRequest(request.id, {
        outcome: "accepted",
        sessionId: session.id,
        turnId: turn.turnId,
        updatedAt: this.iso(),
      });
    } catch (error) {
      const message =
        `${(error as { code?: string }).code ?? "start_failed"}: ${(error as Error).message}`.slice(
          0,
          500,
        );
      if (claimed && claimed.attempts >= (this.options.maxAttempts ?? 10)) {
        await this.options.store.settleWebhookRequest(request.id, {
          outcome: "failed",
          error: message,
          updatedAt: this.iso(),
        });
      }
    }
    return (await this.options.store.getWebhookRequest(request.id)) ?? request;
  }
}
