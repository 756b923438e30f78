/**
 * Shell round-trip benchmark: warm `true` on a computer vs a plain spawn('true') in the same
 * run, and cold acquisition (a new session's first computer + its first command).
 * Run: node --import tsx packages/computers/bench/shell.ts
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BubblewrapComputerProvider } from "../src/index.ts";

const ROUNDS = Number(process.env.ROUNDS ?? 200);

function p50(samples: number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

function spawnTrue(): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn("true", { stdio: ["ignore", "pipe", "pipe"] });
    child.on("error", reject);
    child.on("close", () => resolve());
  });
}

async function time(fn: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await fn();
  return performance.now() - start;
}

const rootDir = mkdtempSync(join(tmpdir(), "oc-bench-shell-"));
const provider = new BubblewrapComputerProvider({
  rootDir,
  ...(process.env.BENCH_CGROUPS === "off" ? { cgroupRoot: false as const } : {}),
});
try {
  const computer = await provider.acquire("warm", { minRemainingSeconds: 10 });
  for (let i = 0; i < 10; i++) {
    await spawnTrue();
    await computer.run("true", { timeoutSeconds: 10 });
  }
  const spawnSamples: number[] = [];
  const warmSamples: number[] = [];
  // Interleaved so both see the same machine load.
  for (let i = 0; i < ROUNDS; i++) {
    spawnSamples.push(await time(spawnTrue));
    warmSamples.push(
      await time(async () => {
        const outcome = await computer.run("true", { timeoutSeconds: 10 });
        if (!outcome.ok) throw new Error(outcome.failure.message);
      }),
    );
  }
  const acquireSamples: number[] = [];
  const coldSamples: number[] = [];
  for (let i = 0; i < Math.min(ROUNDS, 100); i++) {
    const sessionId = `cold-${i}`;
    coldSamples.push(
      await time(async () => {
        const t = performance.now();
        const fresh = await provider.acquire(sessionId, { minRemainingSeconds: 10 });
        acquireSamples.push(performance.now() - t);
        await fresh.run("true", { timeoutSeconds: 10 });
      }),
    );
    await provider.release(sessionId, "session_ended");
  }
  const spawn50 = p50(spawnSamples);
  const warm50 = p50(warmSamples);
  console.log(`spawn('true')                 p50 ${spawn50.toFixed(2)} ms`);
  console.log(
    `warm computer 'true'          p50 ${warm50.toFixed(2)} ms  (${(warm50 / spawn50).toFixed(2)}x spawn; target <= 2x)`,
  );
  console.log(
    `cold acquire (sandbox up)     p50 ${p50(acquireSamples).toFixed(2)} ms  (target <= 20 ms)`,
  );
  console.log(`cold acquire + first 'true'   p50 ${p50(coldSamples).toFixed(2)} ms`);

  // 50 sessions' computers at once: all acquired and running a command together.
  const rssBefore = process.memoryUsage().rss;
  const started = performance.now();
  const ids = Array.from({ length: 50 }, (_, i) => `many-${i}`);
  await Promise.all(
    ids.map(async (id) => {
      const c = await provider.acquire(id, { minRemainingSeconds: 10 });
      await c.run("echo ok > /workspace/ok && sleep 0.2", { timeoutSeconds: 10 });
    }),
  );
  const wallMs = performance.now() - started;
  const hostRss = sandboxesRssMiB();
  console.log(
    `50 computers at once          ${wallMs.toFixed(0)} ms wall; runtime RSS +${((process.memoryUsage().rss - rssBefore) / 1048576).toFixed(1)} MiB; sandboxes' RSS ${hostRss.toFixed(1)} MiB`,
  );
  await Promise.all(ids.map((id) => provider.release(id, "session_ended")));
} finally {
  await provider.close();
  rmSync(rootDir, { recursive: true, force: true });
}

/** Total RSS of this process's bwrap sandboxes and everything in them, from /proc. */
function sandboxesRssMiB(): number {
  let kib = 0;
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const status = readFileSync(`/proc/${entry}/status`, "utf8");
      const cmd = readFileSync(`/proc/${entry}/cmdline`, "utf8");
      if (!cmd.startsWith("bwrap") && !/\nPPid:\s*\d+/.test(status)) continue;
      if (!cmd.includes("bwrap") && !cmd.includes("computer")) continue;
      kib += Number(/VmRSS:\s*(\d+)/.exec(status)?.[1] ?? 0);
    } catch {
      // exited meanwhile
    }
  }
  return kib / 1024;
}
