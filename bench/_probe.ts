import { openEngine } from "./engine-fixture.ts";

const e = await openEngine("normal");
const store = e.store as unknown as Record<string, unknown>;
const counts = new Map<string, { n: number; ns: bigint }>();
const proto = Object.getPrototypeOf(e.store);
for (const k of "createSession apply acquireLease renewLease releaseLease getSession listTurns getTurn findTurnByIdempotencyKey listMessages listToolCalls getToolCall getResultByCall readEvents".split(
  " ",
)) {
  void proto;
  const f = store[k];
  if (typeof f !== "function" || k === "constructor" || k.endsWith("InTx")) continue;
  store[k] = async (...a: unknown[]) => {
    const t0 = process.hrtime.bigint();
    try {
      return await (f as Function).apply(e.store, a);
    } finally {
      const c = counts.get(k) ?? { n: 0, ns: 0n };
      c.n++;
      c.ns += process.hrtime.bigint() - t0;
      counts.set(k, c);
    }
  };
}
for (let i = 0; i < 300; i++) await e.runOnce();
counts.clear();
const N = 2000;
let tc = 0n,
  ts = 0n,
  tw = 0n;
for (let i = 0; i < N; i++) {
  const a = process.hrtime.bigint();
  const { session } = await e.runtime.sessions.create({ agentId: "support" });
  const b = process.hrtime.bigint();
  const sent = await e.runtime.sessions.sendTurn(session.id, { text: "Where is my order A1?" });
  const c = process.hrtime.bigint();
  await e.runtime.sessions.waitForTurn(session.id, sent.turnId);
  const d = process.hrtime.bigint();
  tc += b - a;
  ts += c - b;
  tw += d - c;
}
console.log(
  "mean µs create",
  Number(tc) / N / 1000,
  "sendTurn",
  Number(ts) / N / 1000,
  "wait",
  Number(tw) / N / 1000,
);
for (const [k, v] of [...counts].sort((x, y) => Number(y[1].ns - x[1].ns)))
  console.log(
    k.padEnd(26),
    (v.n / N).toFixed(2),
    "calls/run",
    (Number(v.ns) / N / 1000).toFixed(1),
    "µs/run",
  );
await e.close();
