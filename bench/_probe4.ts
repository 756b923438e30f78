import { openEngine } from "./engine-fixture.ts";

const e = await openEngine((process.argv[2] as "normal" | "full") ?? "normal");
const db = e.store.database;
const st = e.store as unknown as {
  apply: (...a: unknown[]) => Promise<unknown>;
  createSession: (...a: unknown[]) => Promise<unknown>;
  acquireLease: (...a: unknown[]) => Promise<unknown>;
};
const samples: Record<string, number[]> = { apply: [], createSession: [], acquireLease: [] };
let on = false;
for (const k of Object.keys(samples)) {
  const f = (st as Record<string, (...a: unknown[]) => Promise<unknown>>)[k]!.bind(e.store);
  (st as Record<string, unknown>)[k] = (...a: unknown[]) => {
    const t0 = process.hrtime.bigint();
    const p = f(...a);
    if (on) samples[k]!.push(Number(process.hrtime.bigint() - t0) / 1000);
    return p;
  };
}
const ckpt = 0;
for (let i = 0; i < 300; i++) await e.runOnce();
on = true;
const walBefore = db.pragma("wal_checkpoint(PASSIVE)");
for (let i = 0; i < 2000; i++) await e.runOnce();
for (const [k, s] of Object.entries(samples)) {
  s.sort((a, b) => a - b);
  console.log(
    k,
    s.length / 2000,
    "per run; p50",
    s[Math.floor(s.length / 2)]!.toFixed(1),
    "p90",
    s[Math.floor(s.length * 0.9)]!.toFixed(1),
    "p99",
    s[Math.floor(s.length * 0.99)]!.toFixed(1),
    "mean",
    (s.reduce((a, b) => a + b, 0) / s.length).toFixed(1),
  );
}
console.log(
  db.pragma("page_size"),
  db.pragma("wal_autocheckpoint"),
  db.pragma("page_count"),
  walBefore,
  ckpt,
);
await e.close();
