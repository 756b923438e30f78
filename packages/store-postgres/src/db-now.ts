/** The milliseconds since the epoch by the database's clock, which every follower shares. */
export const DB_NOW_MS = "(extract(epoch FROM clock_timestamp()) * 1000)::bigint";
