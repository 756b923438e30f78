// A throwaway PostgreSQL cluster for tests: initdb into a temp dir, listening only on a unix
// socket inside that dir, so it never touches (or clashes with) the machine's own cluster.
// initdb and postgres refuse to run as root, so under root (CI) they run as an unprivileged
// user that owns the dir.
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { chmod, chown, mkdtemp, rm } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import pg from "pg";

const run = promisify(execFile);

const BIN_DIRS = [process.env.PG_BIN_DIR, "/usr/lib/postgresql/15/bin"];
const PORT = 5432; // socket-only and in a private dir, so the port never clashes

export interface PrivateCluster {
  /** A connection string for `database` on this cluster, as the superuser `postgres`. */
  connectionString(database: string): string;
  /** Creates an empty database with a random name and returns its name. */
  createDatabase(): Promise<string>;
  /** Drops a database, disconnecting whoever is still on it. */
  dropDatabase(name: string): Promise<void>;
  stop(): Promise<void>;
}

function binDir(): string {
  for (const dir of BIN_DIRS) if (dir && existsSync(join(dir, "initdb"))) return dir;
  throw new Error("PostgreSQL binaries not found; set PG_BIN_DIR to the dir holding initdb.");
}

/** uid/gid to run the server as: ourselves unless root, else `postgres` (or `nobody`). */
function serverUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const passwd = readFileSync("/etc/passwd", "utf8").split("\n");
  for (const name of ["postgres", "nobody"]) {
    const fields = passwd.find((line) => line.startsWith(`${name}:`))?.split(":");
    if (fields) return { uid: Number(fields[2]), gid: Number(fields[3]) };
  }
  throw new Error("Running as root and no unprivileged user (postgres, nobody) to run initdb.");
}

export interface PrivateClusterOptions {
  /**
   * Keep PostgreSQL's durability defaults (fsync and full_page_writes on): every commit waits
   * for its WAL to reach the disk, as in production. Default false: commits write their WAL
   * (synchronous_commit is on either way) but nothing waits for the disk.
   */
  durable?: boolean;
}

/** Runs `fn` on a connection of its own to `url`, closed afterwards whatever `fn` does. */
export async function withClient<T>(
  url: string,
  fn: (client: pg.Client) => Promise<T>,
): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

export async function startPrivateCluster(
  options: PrivateClusterOptions = {},
): Promise<PrivateCluster> {
  const bin = binDir();
  const user = serverUser();
  // /tmp rather than os.tmpdir(): the server user must be able to reach the dir, and a
  // TMPDIR under root's home would not let it in. Short too, for the socket path limit.
  const dir = await mkdtemp("/tmp/oc-pg-");
  await chmod(dir, 0o700);
  if (user) await chown(dir, user.uid, user.gid);
  const data = join(dir, "data");
  const exec = (tool: string, args: string[]) =>
    run(join(bin, tool), args, { ...(user ?? {}), cwd: dir, timeout: 60_000 });

  await exec("initdb", ["-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "-N"]);
  // Durability is pointless for a throwaway cluster: nothing is flushed to disk. Commits still
  // write their own WAL (synchronous_commit stays on, as in production): with it off, every
  // filled WAL page has the committing backend signal the WAL writer awake, which cost a
  // one-process benchmark run 20-25 % more database CPU per turn (docs/performance.md).
  const serverOptions = [
    `-p ${PORT}`,
    `-k ${dir}`,
    "-c listen_addresses=''",
    ...(options.durable ? [] : ["-c fsync=off", "-c full_page_writes=off"]),
  ].join(" ");
  await exec("pg_ctl", [
    "start",
    "-w",
    "-t",
    "60",
    "-D",
    data,
    "-l",
    join(dir, "log"),
    "-o",
    serverOptions,
  ]);
  await exec("pg_isready", ["-h", dir, "-p", String(PORT), "-t", "30"]);

  // If the test process dies without afterAll, do not leave a server running.
  const pid = Number(readFileSync(join(data, "postmaster.pid"), "utf8").split("\n")[0]);
  const killOnExit = () => {
    try {
      process.kill(pid, "SIGQUIT");
    } catch {
      // already gone
    }
  };
  process.once("exit", killOnExit);

  const connectionString = (database: string) =>
    `postgresql://postgres@localhost:${PORT}/${database}?host=${encodeURIComponent(dir)}`;

  const admin = <T>(fn: (client: pg.Client) => Promise<T>) =>
    withClient(connectionString("postgres"), fn);

  return {
    connectionString,
    async createDatabase() {
      const name = `t_${randomBytes(6).toString("hex")}`;
      await admin((c) => c.query(`CREATE DATABASE ${name}`));
      return name;
    },
    async dropDatabase(name) {
      await admin((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    },
    async stop() {
      process.off("exit", killOnExit);
      await exec("pg_ctl", ["stop", "-m", "immediate", "-w", "-D", data]).catch(killOnExit);
      await rm(dir, { recursive: true, force: true });
    },
  };
}
