// Two dispatcher processes on one PostgreSQL database: every event is delivered once per
// subscription under normal operation, each delivery attempted by exactly one of them.
import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import {
  createPostgresDeliveryStore,
  createPostgresStore,
  type PostgresStore,
} from "@opencomputer/store-postgres";
import { type PrivateCluster, startPrivateCluster } from "@opencomputer/testkit/postgres-cluster";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EventSubscriptions } from "../src/index.ts";
import { startReceiver, type TestReceiver } from "./receiver.ts";
import { settleTurn } from "./settle.ts";

const CHILD = join(import.meta.dirname, "fixtures", "child.ts");
let cluster: PrivateCluster;
let database: string;
let store: PostgresStore;
let receiver: TestReceiver;
const children: ChildProcess[] = [];

beforeAll(async () => {
  cluster = await startPrivateCluster();
  database = await cluster.createDatabase();
  store = await createPostgresStore({ connectionString: cluster.connectionString(database) });
  receiver = await startReceiver();
}, 60_000);

afterAll(async () => {
  for (const c of children) c.kill("SIGKILL");
  await receiver?.close();
  await store?.close();
  await cluster?.stop();
});

function dispatcherProcess(holder: string): Promise<ChildProcess> {
  const proc = spawn(
    process.execPath,
    ["--import", "tsx", CHILD, "dispatch", cluster.connectionString(database), holder],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  children.push(proc);
  return new Promise((done, fail) => {
    proc.stdout!.on("data", (c) => {
      if (String(c).includes("dispatching")) done(proc);
    });
    proc.once("exit", (code) => fail(new Error(`dispatcher exited ${code}`)));
  });
}

describe("two dispatcher processes on PostgreSQL", () => {
  it("deliver each event once per subscription", async () => {
    const deliveries = createPostgresDeliveryStore(store);
    const subs = new EventSubscriptions({ store: deliveries, allowLoopbackHttp: true });
    const created = await Promise.all(
      [1, 2].map(() =>
        subs.create({
          projectId: "default",
          environment: "production",
          events: ["turn.completed", "turn.failed"],
          destination: { type: "https", url: receiver.url },
        }),
      ),
    );
    await Promise.all([dispatcherProcess("rt_a"), dispatcherProcess("rt_b")]);
    const turns = 20;
    await Promise.all(
      Array.from({ length: turns }, (_, i) =>
        settleTurn(store, i % 2 === 0 ? "turn.completed" : "turn.failed"),
      ),
    );
    const expected = turns * created.length;
    const all = async () =>
      (
        await Promise.all(
          created.map((c) =>
            deliveries.listDeliveries({ subscriptionId: c.subscription.id, limit: 100 }),
          ),
        )
      ).flat();
    await expect
      .poll(async () => (await all()).filter((d) => d.status === "delivered").length, {
        timeout: 30_000,
        interval: 100,
      })
      .toBe(expected);
    const records = await all();
    expect(receiver.received).toHaveLength(expected);
    expect(records).toHaveLength(expected);
    for (const r of records) expect(r).toMatchObject({ status: "delivered", attempt: 1 });
    const pairs = receiver.received.map((r) => {
      const body = JSON.parse(r.body) as { deliveryId: string; eventId: string };
      const record = records.find((d) => d.id === body.deliveryId)!;
      return `${record.subscriptionId}/${body.eventId}`;
    });
    expect(new Set(pairs).size).toBe(expected);
    expect(await deliveries.outbox(10)).toEqual([]);
  });
});
