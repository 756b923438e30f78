import { writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { openEngine } from "./engine-fixture.ts";

const e = await openEngine((process.argv[2] as "normal" | "full") ?? "normal");
for (let i = 0; i < 300; i++) await e.runOnce();
const s = new Session();
s.connect();
await s.post("Profiler.enable");
await s.post("Profiler.setSamplingInterval", { interval: 100 });
await s.post("Profiler.start");
const t0 = performance.now();
for (let i = 0; i < 2000; i++) await e.runOnce();
const t1 = performance.now();
const { profile } = await s.post("Profiler.stop");
writeFileSync("/tmp/bx/engine.cpuprofile", JSON.stringify(profile));
console.log("mean µs", (((t1 - t0) / 2000) * 1000).toFixed(0));
await e.close();
