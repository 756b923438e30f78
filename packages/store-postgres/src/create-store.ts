// Connecting a PostgresStore: the options, the pool, the schema's migration, the pipeline's
// shape (timed from the commit flush when not given) and the NOTIFY channel.
import pg from "pg";
import { commitFlushMs } from "./flush-probe.ts";
import { channelFor } from "./notify.ts";
import { PipelinedConnections } from "./pipeline.ts";
import { checkPipelineSize, pipelineSize } from "./pipeline-size.ts";
import { PostgresStore } from "./postgres-store.ts";
import { migrate, SCHEMA_NAME } from "./schema.ts";

export interface PostgresStoreOptions {
  /** e.g. `postgresql://user:pass@host:5432/db`; or give the connection in `pool`. */
  connectionString?: string;
  /** Any further node-postgres Pool settings (max, ssl, timeouts, ...). */
  pool?: pg.PoolConfig;
  /**
   * The PostgreSQL schema to keep the tables in, created when missing (lowercase letters,
   * digits and `_`). Default: the connection's default (usually `public`).
   */
  schema?: string;
  /**
   * NOTIFY, on the schema's channel, the commits other processes' `createPostgresSignal` need:
   * work no lease holder runs, and the events of followed sessions (default true; false for a
   * store used by one process only).
   */
  notify?: boolean;
  /**
   * The store's own statements (one each: every write, every read) go on pipelined connections
   * (pipeline.ts) instead of one pooled connection per statement; `false` sends them through
   * the pool. `connections` (at most) and `fill` (statements in flight on a connection before
   * the next is used) default by how long a commit waits for its WAL flush, timed when the
   * store connects (flush-probe.ts, pipeline-size.ts): 2 and 32 when commits return without
   * waiting for the disk or the flush is quick (under 0.25 ms), 8 and 2 when it is slower.
   * The pool still serves the transactions of the memory, trigger, delivery and usage stores.
   */
  pipeline?: false | { connections?: number; fill?: number };
  /**
   * Writes of several sessions asked for in the same tick go to the database as one set-based
   * call (write-many.ts) where they can (default true). `false` sends each write alone, for a
   * comparison; the outcome of every write is the same either way.
   */
  combineWrites?: boolean;
}

/** Connects, brings the schema up to date (see schema.ts) and returns the store. */
export async function createPostgresStore(options: PostgresStoreOptions): Promise<PostgresStore> {
  const { schema } = options;
  if (schema !== undefined && !SCHEMA_NAME.test(schema)) {
    // A configuration mistake, not a refused write: no StoreError code fits.
    throw new RangeError(`The schema name ${JSON.stringify(schema)} must match ${SCHEMA_NAME}.`);
  }
  if (options.pipeline) checkPipelineSize(options.pipeline);
  const config: pg.PoolConfig = { ...options.pool };
  if (options.connectionString !== undefined) config.connectionString = options.connectionString;
  const pool = new pg.Pool(config);
  // An idle connection dropped by the server emits `error` on the pool; without a listener
  // that would crash the process. The pool discards it and opens a new one when needed.
  pool.on("error", () => {});
  if (schema !== undefined) {
    // `connect` fires before the pool hands the new connection out, and a connection runs its
    // queries in order, so this SET precedes every query of ours on it. (A startup `options`
    // parameter would be overridden by one in the connection string.) It cannot fail for a
    // validated name; a broken connection shows up on the next query anyway.
    pool.on("connect", (client) => {
      client.query(`SET search_path TO ${schema}`).catch(() => {});
    });
  }
  const given = options.pipeline === false ? null : (options.pipeline ?? {});
  // Timed only when the shape is not given whole: the probe is a few commits.
  const timeFlush = given !== null && (given.connections === undefined || given.fill === undefined);
  let flushMs: number | null = null;
  try {
    const client = await pool.connect();
    try {
      await migrate(client, schema);
      if (timeFlush) flushMs = await commitFlushMs(client);
    } finally {
      client.release();
    }
  } catch (error) {
    await pool.end();
    throw error;
  }
  const shape = given === null ? null : { ...pipelineSize(given, flushMs ?? 0), flushMs };
  const pipeline =
    shape === null
      ? null
      : new PipelinedConnections(config, {
          connections: shape.connections,
          fill: shape.fill,
          setup: schema === undefined ? undefined : `SET search_path TO ${schema}`,
        });
  const channel = options.notify === false ? null : channelFor(schema);
  return new PostgresStore(pool, channel, pipeline, shape, options.combineWrites ?? true);
}
