import { openEngine } from "./engine-fixture.ts";

const e = await openEngine("normal");
const db = e.store.database;
for (let i = 0; i < 300; i++) await e.runOnce();
db.pragma("wal_autocheckpoint = 0");
console.log(db.pragma("wal_checkpoint(TRUNCATE)"), db.pragma("page_size", { simple: true }));
const t0 = performance.now();
for (let i = 0; i < 100; i++) await e.runOnce();
const t1 = performance.now();
console.log(
  db.pragma("wal_checkpoint(PASSIVE)"),
  "mean µs without checkpoints",
  ((t1 - t0) * 10).toFixed(0),
);
const c0 = performance.now();
await e.close();
console.log("close ms", performance.now() - c0);
