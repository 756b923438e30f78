import { openEngine } from "./engine-fixture.ts";

// A/B: alternate configurations by env var lists; report p50 and cpu per run.
const configs = JSON.parse(process.env.AB ?? "[{}]") as Record<string, unknown>[];
async function trial(cfg: Record<string, unknown>) {
  const e = await openEngine("normal", {}, cfg as never);
  if (process.env.PRAGMA) e.store.database.pragma(process.env.PRAGMA);
  for (let i = 0; i < 200; i++) await e.runOnce();
  const c0 = process.cpuUsage();
  const N = 2000;
  const per: number[] = [];
  for (let i = 0; i < N; i++) {
    const s = process.hrtime.bigint();
    await e.runOnce();
    per.push(Number(process.hrtime.bigint() - s) / 1000);
  }
  const c = process.cpuUsage(c0);
  per.sort((a, b) => a - b);
  await e.close();
  return { cpu: (c.user + c.system) / N, sys: c.system / N, p50: per[N / 2]!, p90: per[N * 0.9]! };
}
const rounds = Number(process.env.ROUNDS ?? 3);
const acc = configs.map(() => [] as number[]);
for (let r = 0; r < rounds; r++)
  for (const [i, cfg] of configs.entries()) {
    const x = await trial(cfg);
    acc[i]!.push(x.p50);
    console.log(
      JSON.stringify(cfg).padEnd(28),
      `p50 ${x.p50.toFixed(0)} p90 ${x.p90.toFixed(0)} cpu ${x.cpu.toFixed(0)} sys ${x.sys.toFixed(0)}`,
    );
  }
for (const [i, cfg] of configs.entries()) {
  const a = acc[i]!.sort((x, y) => x - y);
  console.log("median p50", JSON.stringify(cfg), a[Math.floor(a.length / 2)]!.toFixed(0));
}
