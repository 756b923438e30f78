// A few node-postgres connections in pipeline mode, shared by every single-statement query of the
// store. A pooled connection runs one query at a time, so with many sessions in flight each
// query waits for its own connection and every backend sleeps and wakes once per statement;
// here the queries of concurrent sessions are written back to back on one connection and the
// backend answers them in order without waiting in between. Named statements already described
// on the connection share a Sync with up to three others sent in the same tick (sync-group.ts),
// fifteen while the thread is short of CPU (core-wait.ts): one commit and one answer for the
// group; when one fails, each is run again alone, so every query's outcome and error are still
// its own.
//
// Only single statements may come here: a transaction (BEGIN ... COMMIT) on a shared connection
// would take in the other callers' queries. Those use the pool.

import pg from "pg";
import { type CoreGauge, threadCoreWait } from "./core-wait.ts";
import { PreparedQuery, type WireConnection } from "./prepared-query.ts";
import { SHORT_OF_CPU_GROUP_LIMIT, SYNC_GROUP_LIMIT, SyncGroup } from "./sync-group.ts";

interface Slot {
  /** The connection, connecting or connected; null until first used or after it broke. */
  client: Promise<pg.Client> | null;
  /** Queries sent on it and not answered yet: the least loaded slot takes the next one. */
  inFlight: number;
  /** Whether a flush is scheduled for the writes of this tick (see `send`). */
  corked: boolean;
  /** The described statements of this tick, sent under one Sync when the tick ends. */
  group: SyncGroup | null;
  /** How many statements a group of this tick takes (chosen when the tick's first comes). */
  groupLimit: number;
}

export interface PipelineOptions {
  /** Connections to spread queries over at most (default 2). */
  connections?: number;
  /**
   * A connection takes more queries while fewer than this many are in flight on it, before the
   * next connection is used (default 32). The store picks both by the server's commit settings
   * (pipeline-size.ts).
   */
  fill?: number;
  /** Run once on each new connection before any query, e.g. `SET search_path`. */
  setup?: string;
  /** Whether the thread is short of CPU, which sizes the groups (default: its schedstat). */
  coreGauge?: CoreGauge;
}

export class PipelinedConnections {
  private readonly slots: Slot[];
  private readonly coreGauge: CoreGauge;
  private ended = false;

  constructor(
    private readonly config: pg.ClientConfig,
    private readonly options: PipelineOptions = {},
  ) {
    const size = Math.max(1, options.connections ?? 2);
    this.coreGauge = options.coreGauge ?? threadCoreWait();
    this.slots = Array.from({ length: size }, () => ({
      client: null,
      inFlight: 0,
      corked: false,
      group: null,
      groupLimit: SYNC_GROUP_LIMIT,
    }));
  }

  /**
   * Sends `query`. `locks` names what it locks (a session id, an idempotency key), if anything:
   * statements that share a commit take their locks in that order (sync-group.ts).
   */
  async query<R extends pg.QueryResultRow>(
    query: pg.QueryConfig,
    locks?: string,
  ): Promise<pg.QueryResult<R>> {
    if (this.ended) throw new Error("The PostgreSQL store is closed.");
    const fill = this.options.fill ?? 32;
    let slot = this.slots[0]!;
    for (const candidate of this.slots) {
      if (candidate.inFlight < fill) {
        slot = candidate;
        break;
      }
      if (candidate.inFlight < slot.inFlight) slot = candidate;
    }
    slot.inFlight++;
    try {
      if (!slot.client) slot.client = this.connect(slot);
      const pending = slot.client;
      const client = await pending;
      try {
        return await this.send<R>(slot, client, query, locks);
      } catch (error) {
        // The server ends a connection with an error of its own before the socket closes:
        // queries sent in between would fail too, so the connection is dropped at once.
        if (brokenConnection(error) && slot.client === pending) {
          slot.client = null;
          client.end().catch(() => {});
        }
        throw error;
      }
    } finally {
      slot.inFlight--;
    }
  }

  async end(): Promise<void> {
    this.ended = true;
    const clients = this.slots.map((slot) => slot.client);
    for (const slot of this.slots) slot.client = null;
    await Promise.all(
      clients.map(async (pending) => {
        const client = await pending?.catch(() => null);
        await client?.end().catch(() => {});
      }),
    );
  }

  /**
   * Sends on `client`. The queries of one tick are corked into one socket write: node-postgres
   * writes each query's messages with its own cork, which nests inside this one. A named
   * statement goes as a PreparedQuery, which describes it once per connection; once described,
   * it joins the slot's open SyncGroup, sent when the group is full, when a query that cannot
   * join comes (so the order of the queries holds), or when the tick ends.
   */
  private send<R extends pg.QueryResultRow>(
    slot: Slot,
    client: pg.Client,
    query: pg.QueryConfig,
    locks: string | undefined,
  ): Promise<pg.QueryResult<R>> {
    const connection = (client as unknown as { connection: WireConnection }).connection;
    if (!slot.corked) {
      slot.corked = true;
      slot.groupLimit = this.coreGauge.short() ? SHORT_OF_CPU_GROUP_LIMIT : SYNC_GROUP_LIMIT;
      connection.stream.cork?.();
      process.nextTick(() => {
        slot.corked = false;
        this.sendGroup(slot);
        connection.stream.uncork?.();
      });
    }
    const { name, text, values } = query;
    if (name === undefined) {
      this.sendGroup(slot);
      return client.query<R>(query);
    }
    return new Promise((resolve, reject) => {
      const prepared = new PreparedQuery(name, text, values ?? [], (error, result) =>
        error ? reject(error) : resolve(result as pg.QueryResult<R>),
      );
      if (!prepared.isDescribedOn(connection)) {
        // Its first execution on this connection describes it, which a group does not.
        this.sendGroup(slot);
        client.query(prepared as unknown as pg.Submittable);
        return;
      }
      if (slot.group !== null && slot.group.client !== client) this.sendGroup(slot);
      if (slot.group === null) slot.group = new SyncGroup(client);
      const group = slot.group;
      group.add(prepared, locks);
      if (group.statements >= slot.groupLimit) this.sendGroup(slot);
    });
  }

  /** Sends the slot's open group: alone, a statement goes with its own Sync as before. */
  private sendGroup(slot: Slot): void {
    const group = slot.group;
    if (group === null) return;
    slot.group = null;
    group.client.query(group.single() ?? (group as unknown as pg.Submittable));
  }

  private async connect(slot: Slot): Promise<pg.Client> {
    const client = new pg.Client({ ...this.config, pipeline: true } as pg.ClientConfig);
    // A broken connection is dropped so the next query opens a new one; the queries it had in
    // flight fail with node-postgres' own error. Without a listener `error` would crash.
    const drop = () => {
      if (slot.client === current) slot.client = null;
    };
    client.on("error", drop);
    client.on("end", drop);
    const current = (async () => {
      try {
        await client.connect();
        if (this.options.setup !== undefined) await client.query(this.options.setup);
        return client;
      } catch (error) {
        drop();
        await client.end().catch(() => {});
        throw error;
      }
    })();
    return current;
  }
}

/**
 * Whether `error` means the connection is gone: the server's "terminating connection" family
 * (SQLSTATE class 57P: shutdown, crash, database dropped), a connection exception (class 08),
 * a socket error (ECONNRESET, EPIPE, ...), or node-postgres' own "terminated" errors.
 */
export function brokenConnection(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === "string") return /^(57P|08|E[A-Z])/.test(code);
  return error instanceof Error && /terminated|not queryable/i.test(error.message);
}
