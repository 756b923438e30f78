// The port for outbound event delivery: event subscriptions, the outbox the store's own trigger
// fills in the same transaction as each `turn.completed|failed|cancelled` event, and the
// delivery records a dispatcher claims, attempts and settles. Separate from `Store` so the
// session write path keeps its one round trip; both SQL stores implement it on the same
// database (@opencomputer/sql-store) and pass @opencomputer/testkit/delivery-conformance.
//
// Times: `…At` strings are ISO 8601 in UTC; due times and claim deadlines are epoch
// milliseconds compared with the caller's clock.

import type { EventDeliveryRecord, EventSubscription, JsonObject } from "@opencomputer/protocol";

/** A subscription as stored: with the secrets it signs with. */
export interface EventSubscriptionRow extends EventSubscription {
  secret: string;
  /** The secret before the last rotation, while it still signs. */
  previousSecret: string | null;
  /** Until when (epoch ms) `previousSecret` signs too. */
  previousSecretUntil: number | null;
}

/** An event the store's trigger put in the outbox, with its session's origin. */
export interface OutboxEvent {
  /** The outbox row (insertion order). */
  rid: number;
  eventId: string;
  sessionId: string;
  sequence: number;
  type: EventDeliveryRecord["eventType"];
  turnId: string | null;
  occurredAt: string;
  data: JsonObject;
  /** From the session; null when the session row is gone. */
  projectId: string | null;
  environment: string | null;
  agentId: string | null;
  deploymentId: string | null;
}

/** A delivery as stored: the API record plus its body's data and the claim on it. */
export interface DeliveryRow extends EventDeliveryRecord {
  deploymentId: string;
  /** The body's `data` (status and result, error or reason). */
  data: JsonObject;
  /** Due time of the next attempt (epoch ms) while pending. */
  nextAttemptMs: number | null;
  claimedBy: string | null;
  claimExpiresAt: number | null;
}

/** The fields a new delivery starts with (pending, attempt 0, due at `nextAttemptMs`). */
export type NewDelivery = Omit<
  DeliveryRow,
  | "status"
  | "attempt"
  | "nextAttemptAt"
  | "lastAttemptAt"
  | "responseStatus"
  | "error"
  | "deliveredAt"
  | "claimedBy"
  | "claimExpiresAt"
> & { nextAttemptMs: number };

/** How an attempt ended: `pending` again (with the next due time) or settled. */
export interface AttemptOutcome {
  status: "pending" | "delivered" | "failed";
  responseStatus: number | null;
  error: string | null;
  lastAttemptAt: string;
  deliveredAt: string | null;
  nextAttemptMs: number | null;
}

export interface DeliveryQuery {
  subscriptionId: string;
  status?: EventDeliveryRecord["status"];
  sessionId?: string;
  /** Deliveries recorded after this id (ids sort by creation). */
  after?: string;
  limit: number;
}

/** What a replay selects among a subscription's original deliveries. */
export interface ReplaySelection {
  deliveryIds?: readonly string[];
  sessionId?: string;
  fromSequence?: number;
  toSequence?: number;
  since?: string;
  until?: string;
  limit: number;
}

export interface DeliveryStore {
  createSubscription(row: EventSubscriptionRow): Promise<void>;
  getSubscription(id: string): Promise<EventSubscriptionRow | null>;
  listSubscriptions(filter: {
    projectId: string;
    environment?: string;
    agentId?: string;
  }): Promise<EventSubscriptionRow[]>;
  /** Sets the given fields; false when there is no such subscription. */
  updateSubscription(
    id: string,
    change: Partial<
      Pick<
        EventSubscriptionRow,
        "status" | "secret" | "previousSecret" | "previousSecretUntil" | "secretRotatedAt"
      >
    > & { updatedAt: string },
  ): Promise<boolean>;
  /**
   * Deletes the subscription; its pending deliveries become `failed` with
   * `subscription_deleted`. False when there was none.
   */
  deleteSubscription(id: string, at: string): Promise<boolean>;

  /** The oldest outbox rows, at most `limit`. */
  outbox(limit: number): Promise<OutboxEvent[]>;
  /** Subscriptions (active or paused) the event goes to. */
  matchingSubscriptions(event: OutboxEvent): Promise<EventSubscriptionRow[]>;
  /** The text of the turn's last assistant message, if any. */
  turnResultText(sessionId: string, turnId: string): Promise<string | null>;
  /**
   * Records a delivery unless one exists for the same subscription and event (replays aside):
   * true when this call inserted it.
   */
  insertDelivery(row: NewDelivery): Promise<boolean>;
  /** Removes an outbox row once its deliveries are recorded. */
  removeOutbox(rid: number): Promise<void>;

  /**
   * Claims up to `limit` pending deliveries of active subscriptions that are due at `now` and
   * not held by a live claim: each gets `holder`, the claim deadline and `attempt` + 1. No
   * subscription ends up with more than `perSubscription` live claims (any process's).
   */
  claimDue(
    holder: string,
    now: number,
    expiresAt: number,
    limit: number,
    perSubscription: number,
  ): Promise<DeliveryRow[]>;
  /** Settles an attempt; false (nothing written) when `holder` no longer holds the claim. */
  finishAttempt(id: string, holder: string, outcome: AttemptOutcome): Promise<boolean>;
  getDelivery(id: string): Promise<DeliveryRow | null>;
  /** Oldest first by id. */
  listDeliveries(query: DeliveryQuery): Promise<DeliveryRow[]>;
  /** The subscription's deliveries a replay selects, oldest first. */
  selectForReplay(subscriptionId: string, selection: ReplaySelection): Promise<DeliveryRow[]>;
  /** Pending deliveries of the subscription become due at `now` (resume). */
  rescheduleHeld(subscriptionId: string, now: number): Promise<number>;
}
