// Many deadlines on one timer: each fires once, never before its time, unless dropped or set
// again; an earlier deadline re-arms the timer; a callback may set itself again; and only a
// keep-alive set holds the process open.
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { Deadlines } from "../../src/engine/deadlines.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function recorder() {
  const fired: Array<{ key: string; at: number }> = [];
  const deadlines = new Deadlines<string>((key) => fired.push({ key, at: Date.now() }), {
    keepAlive: false,
  });
  return { fired, deadlines };
}

describe("Deadlines", () => {
  it("fires each deadline once, not before its time, in time order", async () => {
    const { fired, deadlines } = recorder();
    const start = Date.now();
    deadlines.set("late", start + 60);
    deadlines.set("early", start + 20); // earlier than the armed one: re-arms
    deadlines.set("middle", start + 40);
    await sleep(120);
    expect(fired.map((f) => f.key)).toEqual(["early", "middle", "late"]);
    const due = { early: 20, middle: 40, late: 60 } as Record<string, number>;
    for (const f of fired) expect(f.at).toBeGreaterThanOrEqual(start + due[f.key]!);
    expect(deadlines.size).toBe(0);
    deadlines.close();
  });

  it("forgets a dropped deadline and replaces one set again", async () => {
    const { fired, deadlines } = recorder();
    const start = Date.now();
    deadlines.set("dropped", start + 15);
    deadlines.set("moved", start + 15);
    deadlines.delete("dropped");
    deadlines.set("moved", start + 50);
    await sleep(30);
    expect(fired).toEqual([]);
    await sleep(60);
    expect(fired.map((f) => f.key)).toEqual(["moved"]);
    expect(fired[0]!.at).toBeGreaterThanOrEqual(start + 50);
    deadlines.close();
  });

  it("lets a callback set its key again, as a periodic deadline", async () => {
    let ticks = 0;
    const deadlines = new Deadlines<string>(
      (key) => {
        ticks++;
        if (ticks < 3) deadlines.set(key, Date.now() + 10);
      },
      { keepAlive: false },
    );
    deadlines.set("tick", Date.now() + 10);
    await sleep(150);
    expect(ticks).toBe(3);
    expect(deadlines.size).toBe(0);
    deadlines.close();
  });

  it("keeps many deadlines in order, each moved or dropped one firing as its last setting says", async () => {
    const { fired, deadlines } = recorder();
    const start = Date.now();
    // A fixed pseudo-random sequence: the order of setting is not the order of firing.
    let seed = 7;
    const next = () => {
      seed = (seed * 48271) % 2147483647;
      return seed / 2147483647;
    };
    const want = new Map<string, number>();
    for (let i = 0; i < 600; i++) {
      const key = `k${i % 400}`;
      const roll = next();
      if (roll < 0.1) {
        deadlines.delete(key);
        want.delete(key);
      } else {
        const at = start + 20 + Math.floor(next() * 120);
        deadlines.set(key, at);
        want.set(key, at);
      }
    }
    expect(deadlines.size).toBe(want.size);
    await sleep(250);
    expect(fired.map((f) => f.key).sort()).toEqual([...want.keys()].sort());
    for (const f of fired) expect(f.at).toBeGreaterThanOrEqual(want.get(f.key)!);
    const order = fired.map((f) => want.get(f.key)!);
    expect(order).toEqual([...order].sort((a, b) => a - b));
    expect(deadlines.size).toBe(0);
    deadlines.close();
  });

  it("fires nothing after close, and takes no deadline then", async () => {
    const { fired, deadlines } = recorder();
    deadlines.set("a", Date.now() + 10);
    deadlines.close();
    deadlines.set("b", Date.now() + 10);
    await sleep(40);
    expect(fired).toEqual([]);
  });

  it("keeps the process alive only with keepAlive, and only while a deadline is set", () => {
    const module = fileURLToPath(new URL("../../src/engine/deadlines.ts", import.meta.url));
    const run = (body: string) =>
      spawnSync(
        process.execPath,
        [
          "--import",
          "tsx",
          "--input-type=module",
          "-e",
          `import { Deadlines } from ${JSON.stringify(module)};\n${body}`,
        ],
        { encoding: "utf8", timeout: 20_000 },
      );
    const alive = run(
      `const d = new Deadlines(() => console.log("fired"), { keepAlive: true });
       d.set("k", Date.now() + 200);`,
    );
    expect(alive.stdout).toContain("fired");
    const background = run(
      `const d = new Deadlines(() => console.log("fired"), { keepAlive: false });
       d.set("k", Date.now() + 200);`,
    );
    expect(background.status).toBe(0);
    expect(background.stdout).not.toContain("fired");
    // Dropped: the armed timer no longer holds the process, though it is left to fire.
    const dropped = run(
      `const d = new Deadlines(() => console.log("fired"), { keepAlive: true });
       d.set("k", Date.now() + 60_000);
       d.delete("k");`,
    );
    expect(dropped.status).toBe(0);
    expect(dropped.stdout).not.toContain("fired");
  });
});
