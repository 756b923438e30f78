// The PostgreSQL WorkSignal: one dedicated connection per process LISTENs on the store's
// channel (notify.ts) and fans the commits out to the runtime and its SSE readers. Not a pooled
// connection: LISTEN belongs to a session, and a pool would hand that session to other queries
// and drop it when idle.
//
// Notifications are not durable: those sent while the connection is down are lost. So while
// disconnected the signal emits `resync` every `fallbackPollMs` (readers re-read the store
// from their cursors, dispatch looks for work), and once more after LISTEN is back; while
// connected nothing polls.
//
// Commits that queue work reach every process; the other commits only while some process
// follows their session (follows.ts), so a commit nobody reads costs no notification.
import { SignalFanout, type SignalListener, type WorkSignal } from "@opencomputer/runtime";
import pg from "pg";
import { SessionFollows } from "./follows.ts";
import { channelFor, decodePayload } from "./notify.ts";
import { SCHEMA_NAME } from "./schema.ts";

export interface PostgresSignalOptions {
  connectionString?: string;
  /** Further node-postgres Client settings (ssl, ...). */
  client?: pg.ClientConfig;
  /** The store's schema (createPostgresStore `schema`): it names the channel. */
  schema?: string;
  /** First reconnect delay; it doubles up to `maxReconnectMs` (defaults 100 and 5 000). */
  reconnectMs?: number;
  maxReconnectMs?: number;
  /** How often to emit `resync` while disconnected (default 2 000). */
  fallbackPollMs?: number;
  /** How long a followed session stays marked without renewal (default 60 000; see follows.ts). */
  followTtlMs?: number;
  /** Told about connection trouble; the signal itself never throws after it started. */
  onError?: (error: Error) => void;
}

export class PostgresSignal implements WorkSignal {
  readonly shared = true;
  readonly channel: string;
  private readonly fanout = new SignalFanout();
  private readonly follows: SessionFollows;
  private client: pg.Client | null = null;
  private closed = false;
  private retryTimer: NodeJS.Timeout | null = null;
  private fallbackTimer: NodeJS.Timeout | null = null;
  private delay: number;
  /** Times LISTEN was (re)established; for tests and logs. */
  connections = 0;

  constructor(private readonly options: PostgresSignalOptions) {
    const { schema } = options;
    if (schema !== undefined && !SCHEMA_NAME.test(schema)) {
      throw new RangeError(`The schema name ${JSON.stringify(schema)} must match ${SCHEMA_NAME}.`);
    }
    this.channel = channelFor(schema);
    this.delay = options.reconnectMs ?? 100;
    this.follows = new SessionFollows({
      table: schema === undefined ? "sessions" : `${schema}.sessions`,
      ttlMs: options.followTtlMs ?? 60_000,
      onMarked: (ids) => {
        for (const sessionId of ids) this.fanout.emit({ kind: "resync", sessionId });
      },
      onError: (error) => this.options.onError?.(error),
    });
  }

  listen(listener: SignalListener): () => void {
    return this.fanout.listen(listener);
  }

  /** Hears every commit of the session until the returned function is called (follows.ts). */
  follow(sessionId: string): () => void {
    return this.follows.follow(sessionId);
  }

  /** Renews the marks of every followed session now (the timer does it each ttl/3). */
  renewFollows(): Promise<void> {
    return this.follows.renew();
  }

  /** Connects and LISTENs; rejects if the first attempt fails (a configuration error). */
  async start(): Promise<void> {
    await this.connect();
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.stopFallback();
    this.follows.stop();
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => {});
  }

  private async connect(): Promise<void> {
    const config: pg.ClientConfig = { keepAlive: true, ...this.options.client };
    if (this.options.connectionString !== undefined) {
      config.connectionString = this.options.connectionString;
    }
    const client = new pg.Client(config);
    // Both fire when the connection breaks; the first one schedules the reconnect.
    client.on("error", (error) => this.lost(client, error));
    client.on("end", () => this.lost(client, new Error("LISTEN connection ended")));
    client.on("notification", (message) => {
      if (message.channel !== this.channel) return;
      const signal = decodePayload(message.payload);
      if (signal) this.fanout.emit(signal);
    });
    try {
      await client.connect();
      // The channel is our own identifier (channelFor), quoted as one.
      await client.query(`LISTEN "${this.channel}"`);
      // Marks may have lapsed while away; renewed before the resync below reads again.
      this.follows.client = client;
      await this.follows.renew();
    } catch (error) {
      if (this.follows.client === client) this.follows.client = null;
      client.removeAllListeners("end");
      await client.end().catch(() => {});
      throw error;
    }
    if (this.closed) {
      await client.end().catch(() => {});
      return;
    }
    this.client = client;
    this.connections++;
    this.delay = this.options.reconnectMs ?? 100;
    if (this.connections > 1) {
      // Whatever was committed while we were away was not heard: read everything once more.
      this.stopFallback();
      this.fanout.emit({ kind: "resync" });
    }
  }

  private lost(client: pg.Client, error: Error): void {
    if (this.closed || this.client !== client) return;
    this.client = null;
    if (this.follows.client === client) this.follows.client = null;
    this.options.onError?.(error);
    client.end().catch(() => {});
    this.startFallback();
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.closed || this.retryTimer) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      this.connect().catch((error: Error) => {
        this.options.onError?.(error);
        this.delay = Math.min(this.delay * 2, this.options.maxReconnectMs ?? 5000);
        this.scheduleReconnect();
      });
    }, this.delay);
    this.retryTimer.unref();
  }

  private startFallback(): void {
    if (this.fallbackTimer) return;
    this.fallbackTimer = setInterval(
      () => this.fanout.emit({ kind: "resync" }),
      this.options.fallbackPollMs ?? 2000,
    );
    this.fallbackTimer.unref();
  }

  private stopFallback(): void {
    if (this.fallbackTimer) clearInterval(this.fallbackTimer);
    this.fallbackTimer = null;
  }
}

/** Starts a PostgresSignal on the store's database (and schema): LISTEN is up on return. */
export async function createPostgresSignal(
  options: PostgresSignalOptions,
): Promise<PostgresSignal> {
  const signal = new PostgresSignal(options);
  await signal.start();
  return signal;
}
