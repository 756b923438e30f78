// Event subscriptions: create (the signing secret answered once), list, get, pause/resume,
// rotate-secret (the previous secret keeps signing for 24 hours), delete, and the delivery
// records (list, get, replay). Every record is scoped to its project: another project's id
// answers `not_found`, as a missing one does.
import { randomBytes } from "node:crypto";
import {
  DELIVERED_EVENT_TYPES,
  type EventDeliveryRecord,
  type EventSubscription,
} from "@opencomputer/protocol";
import {
  type DeliveryRow,
  type DeliveryStore,
  type EventSubscriptionRow,
  NotFoundError,
  newId,
} from "@opencomputer/runtime";
import { checkDestination, EventSubscriptionError } from "./destination.ts";
import { checkReplay, type ReplayBody } from "./replay.ts";

/** How long the secret before a rotation still signs. */
export const ROTATION_OVERLAP_MS = 24 * 3600_000;
const ENVIRONMENTS = new Set(["development", "production"]);
const AGENT_ID = /^[a-zA-Z0-9][a-zA-Z0-9_.-]{0,127}$/;
const STATUSES = new Set(["pending", "delivered", "failed"]);

export interface EventSubscriptionsOptions {
  store: DeliveryStore;
  clock?: () => number;
  /** Accept `http://` destinations on a loopback host (development and tests only). */
  allowLoopbackHttp?: boolean;
}

export interface CreatedSubscription {
  subscription: EventSubscription;
  /** Shown on this answer only. */
  signingSecret: string;
}

const newSecret = () => `ocsec_${randomBytes(32).toString("base64url")}`;

export function publicSubscription(row: EventSubscriptionRow): EventSubscription {
  const { secret: _s, previousSecret: _p, previousSecretUntil: _u, ...rest } = row;
  return rest;
}

export function publicDelivery(row: DeliveryRow): EventDeliveryRecord {
  const {
    data: _d,
    deploymentId: _dep,
    nextAttemptMs: _n,
    claimedBy: _c,
    claimExpiresAt: _e,
    ...record
  } = row;
  return record;
}

const invalid = (path: string, why: string): never => {
  throw new EventSubscriptionError("invalid_event_subscription", `${path}: ${why}`, { path });
};

const invalidQuery = (path: string, why: string): never => {
  throw new EventSubscriptionError("invalid_query", `${path}: ${why}`, { path });
};

function checkEvents(raw: unknown): EventSubscription["events"] {
  if (!Array.isArray(raw) || raw.length === 0 || raw.length > DELIVERED_EVENT_TYPES.length)
    return invalid("events", `must list one or more of ${DELIVERED_EVENT_TYPES.join(", ")}`);
  raw.forEach((type, i) => {
    if (!(DELIVERED_EVENT_TYPES as readonly unknown[]).includes(type))
      throw new EventSubscriptionError(
        "invalid_event_subscription",
        `events[${i}]: ${JSON.stringify(type).slice(0, 60)} is not delivered; use ${DELIVERED_EVENT_TYPES.join(", ")}`,
        { path: `events[${i}]` },
      );
  });
  return [...new Set(raw)] as EventSubscription["events"];
}

export class EventSubscriptions {
  private readonly now: () => number;

  constructor(private readonly options: EventSubscriptionsOptions) {
    this.now = options.clock ?? Date.now;
  }

  private iso(): string {
    return new Date(this.now()).toISOString();
  }

  async create(input: {
    projectId: string;
    environment?: unknown;
    agentId?: unknown;
    events?: unknown;
    destination?: unknown;
  }): Promise<CreatedSubscription> {
    if (typeof input.environment !== "string" || !ENVIRONMENTS.has(input.environment))
      invalid("environment", "must be development or production");
    if (input.agentId !== undefined && input.agentId !== null)
      if (typeof input.agentId !== "string" || !AGENT_ID.test(input.agentId))
        invalid("agentId", "must be an agent id of at most 128 letters, digits, _ . -");
    const events = checkEvents(input.events);
    const url = checkDestination(input.destination, this.options.allowLoopbackHttp ?? false);
    const at = this.iso();
    const signingSecret = newSecret();
    const row: EventSubscriptionRow = {
      id: newId("evs", this.now()),
      projectId: input.projectId,
      environment: input.environment as string,
      agentId: (input.agentId as string | undefined) ?? null,
      events,
      destination: { type: "https", url },
      status: "active",
      secret: signingSecret,
      previousSecret: null,
      previousSecretUntil: null,
      createdAt: at,
      updatedAt: at,
      secretRotatedAt: null,
    };
    await this.options.store.createSubscription(row);
    return { subscription: publicSubscription(row), signingSecret };
  }

  async list(filter: { projectId: string; environment?: string; agentId?: string }) {
    return (await this.options.store.listSubscriptions(filter)).map(publicSubscription);
  }

  private async owned(id: string, projectId: string): Promise<EventSubscriptionRow> {
    const row = await this.options.store.getSubscription(id);
    if (!row || row.projectId !== projectId)
      throw new EventSubscriptionError(
        "event_subscription_not_found",
        `No event subscription ${id.slice(0, 80)} in this project`,
        { path: "id" },
      );
    return row;
  }

  async get(id: string, projectId: string): Promise<EventSubscription> {
    return publicSubscription(await this.owned(id, projectId));
  }

  /** Pauses (deliveries are recorded and held) or resumes (what was held is due now). */
  async setStatus(id: string, projectId: string, status: "active" | "paused") {
    await this.owned(id, projectId);
    await this.options.store.updateSubscription(id, { status, updatedAt: this.iso() });
    if (status === "active") await this.options.store.rescheduleHeld(id, this.now());
    return this.get(id, projectId);
  }

  async rotateSecret(id: string, projectId: string): Promise<CreatedSubscription> {
    const row = await this.owned(id, projectId);
    const signingSecret = newSecret();
    const at = this.iso();
    await this.options.store.updateSubscription(id, {
      secret: signingSecret,
      previousSecret: row.secret,
      previousSecretUntil: this.now() + ROTATION_OVERLAP_MS,
      secretRotatedAt: at,
      updatedAt: at,
    });
    return { subscription: await this.get(id, projectId), signingSecret };
  }

  async remove(id: string, projectId: string): Promise<void> {
    await this.owned(id, projectId);
    await this.options.store.deleteSubscription(id, this.iso());
  }

  async deliveries(
    id: string,
    projectId: string,
    query: { status?: string; sessionId?: string; after?: string; limit?: string },
  ): Promise<{ deliveries: EventDeliveryRecord[]; nextCursor?: string }> {
    await this.owned(id, projectId);
    if (query.status !== undefined && !STATUSES.has(query.status))
      invalidQuery("status", "must be pending, delivered or failed");
    const limit = query.limit === undefined ? 50 : Number(query.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 200)
      invalidQuery("limit", "must be an integer from 1 to 200");
    const rows = await this.options.store.listDeliveries({
      subscriptionId: id,
      limit,
      ...(query.status !== undefined ? { status: query.status as DeliveryRow["status"] } : {}),
      ...(query.sessionId !== undefined ? { sessionId: query.sessionId } : {}),
      ...(query.after !== undefined ? { after: query.after } : {}),
    });
    const deliveries = rows.map(publicDelivery);
    const last = deliveries.at(-1);
    return rows.length === limit && last ? { deliveries, nextCursor: last.id } : { deliveries };
  }

  async delivery(id: string, projectId: string, deliveryId: string) {
    await this.owned(id, projectId);
    const row = await this.options.store.getDelivery(deliveryId);
    if (!row || row.subscriptionId !== id) throw new NotFoundError("event delivery", deliveryId);
    return publicDelivery(row);
  }

  /** New pending deliveries of the selected ones, each naming its original in `replayOf`. */
  async replay(id: string, projectId: string, body: ReplayBody) {
    await this.owned(id, projectId);
    const selection = checkReplay(body);
    const originals = await this.options.store.selectForReplay(id, selection);
    const out: EventDeliveryRecord[] = [];
    for (const original of originals) {
      const now = this.now();
      const row = {
        ...original,
        id: newId("dlv", now),
        replayOf: original.replayOf ?? original.id,
        createdAt: new Date(now).toISOString(),
        nextAttemptMs: now,
      };
      await this.options.store.insertDelivery(row);
      const stored = await this.options.store.getDelivery(row.id);
      if (stored) out.push(publicDelivery(stored));
    }
    return out;
  }
}
