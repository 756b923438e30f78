// The DeliveryStore port over SQL, once for both stores. Each operation is one statement, so it
// is atomic on its own; races between processes are decided by the unique index on
// (subscription, event) for fan-out and by a guarded UPDATE (`claim lapsed`) for attempts.
import type {
  AttemptOutcome,
  DeliveryQuery,
  DeliveryStore,
  EventSubscriptionRow,
  NewDelivery,
  OutboxEvent,
  ReplaySelection,
} from "@opencomputer/runtime";
import {
  DELIVERY_COLUMNS,
  deliveryFromRow,
  eventList,
  OUTBOX_COLUMNS,
  outboxFromRow,
  SUBSCRIPTION_COLUMNS,
  subscriptionFromRow,
} from "./delivery-rows.ts";
import type { SqlExecutor } from "./trigger-store.ts";

const filters = (pairs: ReadonlyArray<readonly [string, unknown]>) => {
  const given = pairs.filter(([, value]) => value !== undefined);
  return { sql: given.map(([column]) => `${column} = ?`), params: given.map(([, v]) => v) };
};

/** The text parts of a stored message's content (a string, or an array of parts). */
function messageText(content: unknown): string {
  const value = typeof content === "string" ? JSON.parse(content) : content;
  if (typeof value === "string") return value;
  if (!Array.isArray(value)) return "";
  return value
    .map((part) =>
      part && typeof part === "object" && typeof part.text === "string" ? part.text : "",
    )
    .join("");
}

export class SqlDeliveryStore implements DeliveryStore {
  constructor(private readonly sql: SqlExecutor) {}

  async createSubscription(row: EventSubscriptionRow) {
    await this.sql.run(
      `INSERT INTO event_subscriptions (${SUBSCRIPTION_COLUMNS})
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        row.id,
        row.projectId,
        row.environment,
        row.agentId,
        eventList(row.events),
        row.destination.url,
        row.status,
        row.secret,
        row.previousSecret,
        row.previousSecretUntil,
        row.createdAt,
        row.updatedAt,
        row.secretRotatedAt,
      ],
    );
  }

  async getSubscription(id: string) {
    const rows = await this.sql.all(
      `SELECT ${SUBSCRIPTION_COLUMNS} FROM event_subscriptions WHERE id = ?`,
      [id],
    );
    return rows[0] ? subscriptionFromRow(rows[0]) : null;
  }

  async listSubscriptions(filter: { projectId: string; environment?: string; agentId?: string }) {
    const where = filters([
      ["project_id", filter.projectId],
      ["environment", filter.environment],
      ["agent_id", filter.agentId],
    ]);
    const rows = await this.sql.all(
      `SELECT ${SUBSCRIPTION_COLUMNS} FROM event_subscriptions WHERE ${where.sql.join(" AND ")}
       ORDER BY created_at, id`,
      where.params,
    );
    return rows.map(subscriptionFromRow);
  }

  async updateSubscription(id: string, change: Parameters<DeliveryStore["updateSubscription"]>[1]) {
    const set = filters([
      ["status", change.status],
      ["secret", change.secret],
      ["previous_secret", change.previousSecret],
      ["previous_secret_until", change.previousSecretUntil],
      ["secret_rotated_at", change.secretRotatedAt],
      ["updated_at", change.updatedAt],
    ]);
    const changed = await this.sql.run(
      `UPDATE event_subscriptions SET ${set.sql.join(", ")} WHERE id = ?`,
      [...set.params, id],
    );
    return changed > 0;
  }

  async deleteSubscription(id: string, at: string) {
    const changed = await this.sql.run("DELETE FROM event_subscriptions WHERE id = ?", [id]);
    if (changed === 0) return false;
    await this.sql.run(
      `UPDATE event_deliveries SET status = 'failed', error = 'subscription_deleted',
         next_attempt_ms = NULL, last_attempt_at = COALESCE(last_attempt_at, ?)
       WHERE subscription_id = ? AND status = 'pending'`,
      [at, id],
    );
    return true;
  }

  async outbox(limit: number) {
    const rows = await this.sql.all(
      `SELECT ${OUTBOX_COLUMNS} FROM event_outbox o LEFT JOIN sessions s ON s.id = o.session_id
       ORDER BY o.rid LIMIT ?`,
      [limit],
    );
    return rows.map(outboxFromRow);
  }

  async matchingSubscriptions(event: OutboxEvent) {
    if (event.projectId === null) return [];
    const rows = await this.sql.all(
      `SELECT ${SUBSCRIPTION_COLUMNS} FROM event_subscriptions
       WHERE project_id = ? AND environment = ? AND (agent_id IS NULL OR agent_id = ?)
         AND events LIKE ? ORDER BY id`,
      [event.projectId, event.environment, event.agentId, `%,${event.type},%`],
    );
    return rows.map(subscriptionFromRow);
  }

  async turnResultText(sessionId: string, turnId: string) {
    const rows = await this.sql.all(
      `SELECT content FROM messages WHERE session_id = ? AND turn_id = ? AND role = 'assistant'
       ORDER BY rid DESC LIMIT 1`,
      [sessionId, turnId],
    );
    return rows[0] ? messageText(rows[0].content) : null;
  }

  async insertDelivery(row: NewDelivery) {
    const changed = await this.sql.run(
      `INSERT INTO event_deliveries (${DELIVERY_COLUMNS})
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', 0, ?, NULL, NULL, NULL, NULL, ?,
               ?, NULL, NULL)
       ON CONFLICT DO NOTHING`,
      [
        row.id,
        row.subscriptionId,
        row.eventId,
        row.eventType,
        row.sequence,
        row.occurredAt,
        row.projectId,
        row.environment,
        row.agentId,
        row.deploymentId,
        row.sessionId,
        row.turnId,
        JSON.stringify(row.data),
        row.nextAttemptMs,
        row.replayOf,
        row.createdAt,
      ],
    );
    return changed > 0;
  }

  async removeOutbox(rid: number) {
    await this.sql.run("DELETE FROM event_outbox WHERE rid = ?", [rid]);
  }

  async claimDue(
    holder: string,
    now: number,
    expiresAt: number,
    limit: number,
    perSubscription: number,
  ) {
    // At most `perSubscription` live claims per subscription, counting other processes' claims,
    // so a slow receiver's backlog never fills every slot. The outer guard is re-checked on each
    // row as it is updated, so when two processes pick the same due row only the first claims it.
    const rows = await this.sql.all(
      `UPDATE event_deliveries
       SET claimed_by = ?, claim_expires_at = ?, attempt = attempt + 1
       WHERE id IN (
         SELECT id FROM (
           SELECT d.id, d.next_attempt_ms,
             ROW_NUMBER() OVER (PARTITION BY d.subscription_id ORDER BY d.next_attempt_ms, d.id)
               + (SELECT count(*) FROM event_deliveries h
                  WHERE h.subscription_id = d.subscription_id AND h.status = 'pending'
                    AND h.claim_expires_at >= ?) AS slot
           FROM event_deliveries d JOIN event_subscriptions s ON s.id = d.subscription_id
           WHERE d.status = 'pending' AND d.next_attempt_ms <= ? AND s.status = 'active'
             AND (d.claim_expires_at IS NULL OR d.claim_expires_at < ?)
         ) due
         WHERE slot <= ?
         ORDER BY next_attempt_ms, id LIMIT ?)
       AND status = 'pending' AND (claim_expires_at IS NULL OR claim_expires_at < ?)
       RETURNING ${DELIVERY_COLUMNS}`,
      [holder, expiresAt, now, now, now, perSubscription, limit, now],
    );
    return rows.map(deliveryFromRow);
  }

  async finishAttempt(id: string, holder: string, o: AttemptOutcome) {
    const changed = await this.sql.run(
      `UPDATE event_deliveries SET status = ?, response_status = ?, error = ?,
         last_attempt_at = ?, delivered_at = ?, next_attempt_ms = ?,
         claimed_by = NULL, claim_expires_at = NULL
       WHERE id = ? AND claimed_by = ? AND status = 'pending'`,
      [
        o.status,
        o.responseStatus,
        o.error,
        o.lastAttemptAt,
        o.deliveredAt,
        o.nextAttemptMs,
        id,
        holder,
      ],
    );
    return changed > 0;
  }

  async getDelivery(id: string) {
    const rows = await this.sql.all(
      `SELECT ${DELIVERY_COLUMNS} FROM event_deliveries WHERE id = ?`,
      [id],
    );
    return rows[0] ? deliveryFromRow(rows[0]) : null;
  }

  async listDeliveries(q: DeliveryQuery) {
    const where = filters([
      ["subscription_id", q.subscriptionId],
      ["status", q.status],
      ["session_id", q.sessionId],
    ]);
    if (q.after !== undefined) {
      where.sql.push("id > ?");
      where.params.push(q.after);
    }
    const rows = await this.sql.all(
      `SELECT ${DELIVERY_COLUMNS} FROM event_deliveries WHERE ${where.sql.join(" AND ")}
       ORDER BY id LIMIT ?`,
      [...where.params, q.limit],
    );
    return rows.map(deliveryFromRow);
  }

  async selectForReplay(subscriptionId: string, s: ReplaySelection) {
    const where = ["subscription_id = ?"];
    const params: unknown[] = [subscriptionId];
    if (s.deliveryIds) {
      where.push(`id IN (${s.deliveryIds.map(() => "?").join(", ") || "NULL"})`);
      params.push(...s.deliveryIds);
    }
    const add = (sql: string, value: unknown) => {
      if (value === undefined) return;
      where.push(sql);
      params.push(value);
    };
    add("session_id = ?", s.sessionId);
    add("seq >= ?", s.fromSequence);
    add("seq <= ?", s.toSequence);
    add("occurred_at >= ?", s.since);
    add("occurred_at < ?", s.until);
    const rows = await this.sql.all(
      `SELECT ${DELIVERY_COLUMNS} FROM event_deliveries WHERE ${where.join(" AND ")}
       ORDER BY id LIMIT ?`,
      [...params, s.limit],
    );
    return rows.map(deliveryFromRow);
  }

  async rescheduleHeld(subscriptionId: string, now: number) {
    return this.sql.run(
      `UPDATE event_deliveries SET next_attempt_ms = ?
       WHERE subscription_id = ? AND status = 'pending' AND next_attempt_ms > ?`,
      [now, subscriptionId, now],
    );
  }
}
