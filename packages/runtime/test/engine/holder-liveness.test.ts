// When a lease holder counts as dead on this machine (holder-liveness.ts), with a fake /proc;
// and once against the real one: this process is alive, a child it killed and reaped is dead.
import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { isDeadHolder } from "../../src/engine/holder-liveness.ts";
import {
  type Incarnation,
  type ProcessProbe,
  parseIncarnation,
  parseStat,
  procProbe,
  withIncarnation,
} from "../../src/engine/incarnation.ts";

const BOOT = "0123456789abcdef0123456789abcdef";
const self: Incarnation = { bootId: BOOT, pidNamespace: "4026531836", pid: 100, startTime: "500" };

function probe(processes: Record<number, { startTime: string; state: string }>): ProcessProbe {
  return { self: () => self, stat: (pid) => processes[pid] ?? null };
}

const holder = (over: Partial<Incarnation>) => withIncarnation("rt_x", { ...self, ...over });

describe("isDeadHolder", () => {
  it("is dead when its pid is gone", () => {
    expect(isDeadHolder(holder({ pid: 7, startTime: "900" }), probe({}))).toBe(true);
  });

  it("is dead when its pid was reused: alive, but started at another time", () => {
    const p = probe({ 7: { startTime: "901", state: "S" } });
    expect(isDeadHolder(holder({ pid: 7, startTime: "900" }), p)).toBe(true);
  });

  it("is dead when its process is a zombie (killed, not reaped)", () => {
    const p = probe({ 7: { startTime: "900", state: "Z" } });
    expect(isDeadHolder(holder({ pid: 7, startTime: "900" }), p)).toBe(true);
  });

  it("is alive when its pid runs with the same start time, even stopped", () => {
    for (const state of ["R", "S", "D", "T"]) {
      const p = probe({ 7: { startTime: "900", state } });
      expect(isDeadHolder(holder({ pid: 7, startTime: "900" }), p)).toBe(false);
    }
    expect(isDeadHolder(holder({}), probe({}))).toBe(false);
  });

  it("never judges a holder of another boot, pid namespace, or without an incarnation", () => {
    const none = probe({});
    expect(isDeadHolder(holder({ pid: 7, bootId: "f".repeat(32) }), none)).toBe(false);
    expect(isDeadHolder(holder({ pid: 7, pidNamespace: "4026532000" }), none)).toBe(false);
    expect(isDeadHolder("rt_configured", none)).toBe(false);
    expect(isDeadHolder("rt_x@garbage:1:2", none)).toBe(false);
    const blind: ProcessProbe = { self: () => null, stat: () => null };
    expect(isDeadHolder(holder({ pid: 7 }), blind)).toBe(false);
  });
});

describe("incarnation", () => {
  it("round-trips through a runtime id", () => {
    const id = withIncarnation("rt_abc", self);
    expect(parseIncarnation(id)).toStrictEqual(self);
    expect(parseIncarnation("rt_abc")).toBeNull();
  });

  it("reads the start time after a command name with spaces and parentheses", () => {
    const rest = Array.from({ length: 20 }, (_, i) => String(i + 3));
    rest[0] = "S";
    expect(parseStat(`42 (a) b (c) ${rest.join(" ")} 23 24`)).toStrictEqual({
      state: "S",
      startTime: "22",
    });
  });

  it.runIf(process.platform === "linux")(
    "tells, on this machine, a live process from a dead one",
    async () => {
      const real = procProbe();
      const me = real.self()!;
      expect(me.pid).toBe(process.pid);
      const child = spawn(process.execPath, ["-e", "setTimeout(() => {}, 60000)"]);
      await new Promise((resolve) => child.once("spawn", resolve));
      const started = real.stat(child.pid!)!;
      const id = withIncarnation("rt_child", {
        ...me,
        pid: child.pid!,
        startTime: started.startTime,
      });
      expect(isDeadHolder(id, real)).toBe(false);
      child.kill("SIGKILL");
      await new Promise((resolve) => child.once("close", resolve));
      expect(isDeadHolder(id, real)).toBe(true);
    },
  );
});
