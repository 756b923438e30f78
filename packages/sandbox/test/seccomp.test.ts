import { describe, expect, it } from "vitest";
import {
  AARCH64,
  AUDIT_ARCH_AARCH64,
  AUDIT_ARCH_X86_64,
  BLOCKED_SYSCALLS,
  seccompFilter,
  X86_64,
} from "../src/index.ts";

const ALLOW = 0x7fff0000;
const EPERM = 0x00050001;
const ENOSYS = 0x00050026;
const KILL = 0x80000000;

/** A classic-BPF interpreter for exactly the instructions the generator emits. */
function run(program: Buffer, arch: number, nr: number, arg0 = 0): number {
  const data = Buffer.alloc(64);
  data.writeInt32LE(nr, 0);
  data.writeUInt32LE(arch, 4);
  data.writeUInt32LE(arg0 >>> 0, 16);
  let a = 0;
  for (let pc = 0; pc * 8 < program.length; pc++) {
    const code = program.readUInt16LE(pc * 8);
    const jt = program.readUInt8(pc * 8 + 2);
    const jf = program.readUInt8(pc * 8 + 3);
    const k = program.readUInt32LE(pc * 8 + 4);
    if (code === 0x20) a = data.readUInt32LE(k);
    else if (code === 0x06) return k;
    else if (code === 0x15) pc += a === k ? jt : jf;
    else if (code === 0x35) pc += a >= k ? jt : jf;
    else if (code === 0x45) pc += (a & k) !== 0 ? jt : jf;
    else throw new Error(`unexpected opcode ${code}`);
  }
  throw new Error("fell off the end of the program");
}

describe("seccompFilter", () => {
  const program = seccompFilter();

  it("is a whole number of sock_filter entries within the kernel's limit", () => {
    expect(program.length % 8).toBe(0);
    expect(program.length / 8).toBeLessThan(4096);
  });

  it("blocks each listed syscall with EPERM, per architecture's own numbers", () => {
    for (const [arch, table] of [
      [AUDIT_ARCH_X86_64, X86_64],
      [AUDIT_ARCH_AARCH64, AARCH64],
    ] as const) {
      for (const name of BLOCKED_SYSCALLS) {
        const nr = table[name];
        if (nr !== undefined) expect(run(program, arch, nr), name).toBe(EPERM);
      }
    }
    // aarch64's unshare is 97; x86_64's number (272) means something else there.
    expect(run(program, AUDIT_ARCH_AARCH64, 272)).toBe(ALLOW);
  });

  it("allows ordinary calls and plain clone, refuses clone with namespace flags", () => {
    expect(run(program, AUDIT_ARCH_X86_64, 0)).toBe(ALLOW); // read
    expect(run(program, AUDIT_ARCH_X86_64, 59)).toBe(ALLOW); // execve
    const SIGCHLD = 17;
    const CLONE_THREADS = 0x003d0f00;
    expect(run(program, AUDIT_ARCH_X86_64, 56, SIGCHLD)).toBe(ALLOW);
    expect(run(program, AUDIT_ARCH_X86_64, 56, CLONE_THREADS)).toBe(ALLOW);
    expect(run(program, AUDIT_ARCH_X86_64, 56, 0x10000000 | SIGCHLD)).toBe(EPERM); // NEWUSER
    expect(run(program, AUDIT_ARCH_AARCH64, 220, 0x40000000)).toBe(EPERM); // NEWNET
    expect(run(program, AUDIT_ARCH_AARCH64, 220, 0x00020000)).toBe(EPERM); // NEWNS
  });

  it("answers clone3 with ENOSYS (glibc then falls back to clone)", () => {
    expect(run(program, AUDIT_ARCH_X86_64, 435)).toBe(ENOSYS);
    expect(run(program, AUDIT_ARCH_AARCH64, 435)).toBe(ENOSYS);
  });

  it("kills other architectures and refuses x32 calls", () => {
    const AUDIT_ARCH_I386 = 0x40000003;
    expect(run(program, AUDIT_ARCH_I386, 0)).toBe(KILL);
    expect(run(program, AUDIT_ARCH_X86_64, 0x40000000 | 272)).toBe(EPERM);
  });
});
