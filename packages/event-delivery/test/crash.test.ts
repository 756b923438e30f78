// A process killed (SIGKILL) after a turn's end committed still has its delivery made: before the
// first attempt (the outbox row committed with the event), and during it (the claim lapses and
// another process takes the delivery over as attempt 2).
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { verifyEventDelivery } from "@opencomputer/event-receiver";
import { createSqliteDeliveryStore, createSqliteStore } from "@opencomputer/store-sqlite";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { EventDispatcher, EventSubscriptions } from "../src/index.ts";
import { startReceiver, type TestReceiver } from "./receiver.ts";

const CHILD = join(import.meta.dirname, "fixtures", "child.ts");
let dir: string;
let path: string;
let receiver: TestReceiver;
let child: ChildProcess | undefined;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), "oc-delivery-crash-"));
  path = join(dir, "store.db");
  receiver = await startReceiver();
});

afterEach(async () => {
  child?.kill("SIGKILL");
  await receiver.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Runs the child until `ready` says so, then kills it with SIGKILL and waits for its exit. */
async function runAndKill(args: string[], ready: (stdout: string) => boolean): Promise<void> {
  const proc = spawn(process.execPath, ["--import", "tsx", CHILD, ...args], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  child = proc;
  let out = "";
  let err = "";
  proc.stderr!.on("data", (c) => {
    err += String(c);
  });
  const exited = new Promise<NodeJS.Signals | null>((done) =>
    proc.once("exit", (_code, signal) => done(signal)),
  );
  await new Promise<void>((done, fail) => {
    const check = () => {
      if (ready(out)) done();
    };
    proc.stdout!.on("data", (c) => {
      out += String(c);
      check();
    });
    const timer = setInterval(check, 20);
    proc.once("exit", (code) => {
      clearInterval(timer);
      fail(new Error(`child exited ${code}: ${err}`));
    });
    void exited.then(() => clearInterval(timer));
  }).finally(() => proc.kill("SIGKILL"));
  expect(await exited).toBe("SIGKILL");
}

async function subscribe(): Promise<string> {
  const store = createSqliteStore({ path });
  try {
    const subs = new EventSubscriptions({
      store: createSqliteDeliveryStore(store),
      allowLoopbackHttp: true,
    });
    const { signingSecret } = await subs.create({
      projectId: "default",
      environment: "production",
      events: ["turn.completed"],
      destination: { type: "https", url: receiver.url },
    });
    return signingSecret;
  } finally {
    await store.close();
  }
}

/** After the crash: a fresh process's dispatcher, at `clock`, on the same file. */
async function deliverAfterRestart(clock: () => number) {
  const store = createSqliteStore({ path });
  try {
    const deliveries = createSqliteDeliveryStore(store);
    await new EventDispatcher({ store: deliveries, holder: "rt_after", clock }).runOnce();
    return await deliveries.listDeliveries({
      subscriptionId: (await deliveries.listSubscriptions({ projectId: "default" }))[0]!.id,
      limit: 10,
    });
  } finally {
    await store.close();
  }
}

describe("a process killed after the event commit", () => {
  it("delivers after restart when killed before the first attempt", async () => {
    const secret = await subscribe();
    await runAndKill(["commit", path], (out) => out.includes("committed"));
    expect(receiver.received).toHaveLength(0);
    const records = await deliverAfterRestart(Date.now);
    expect(records).toEqual([expect.objectContaining({ status: "delivered", attempt: 1 })]);
    expect(receiver.received).toHaveLength(1);
    const r = receiver.received[0]!;
    const headers = r.headers as Record<string, string>;
    expect(
      await verifyEventDelivery({ secret, headers, method: r.method, path: r.path, body: r.body }),
    ).toBe(true);
  });

  it("takes over a delivery whose process died mid-attempt, once its claim lapsed", async () => {
    await subscribe();
    receiver.script({ hang: true });
    await runAndKill(["claim", path], () => receiver.received.length === 1);
    const early = await deliverAfterRestart(Date.now);
    expect(early).toEqual([expect.objectContaining({ status: "pending", attempt: 1 })]);
    expect(receiver.received).toHaveLength(1);
    const records = await deliverAfterRestart(() => Date.now() + 5_001);
    expect(records).toEqual([expect.objectContaining({ status: "delivered", attempt: 2 })]);
    expect(receiver.received).toHaveLength(2);
    expect(receiver.received.map((r) => r.headers["x-oc-delivery-attempt"])).toEqual([
      `${records[0]!.id}:1`,
      `${records[0]!.id}:2`,
    ]);
  });
});
