import { openEngine } from "./engine-fixture.ts";

const gc = (globalThis as { gc?: () => void }).gc!;
const e = await openEngine("normal");
for (let i = 0; i < 200; i++) await e.runOnce();
gc();
gc();
const h0 = process.memoryUsage().heapUsed;
for (let i = 0; i < 4000; i++) await e.runOnce();
gc();
gc();
const h1 = process.memoryUsage().heapUsed;
console.log("retained heap per finished session (bytes)", ((h1 - h0) / 4000).toFixed(0));
await e.close();
gc();
gc();
console.log(
  "after close, heap delta MiB",
  ((process.memoryUsage().heapUsed - h0) / 1048576).toFixed(2),
);
