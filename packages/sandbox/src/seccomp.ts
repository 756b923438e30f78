import {
  AARCH64,
  AUDIT_ARCH_AARCH64,
  AUDIT_ARCH_X86_64,
  type SyscallName,
  X86_64,
} from "./seccomp-syscalls.ts";

/**
 * A seccomp filter for bubblewrap's `--seccomp FD`, generated here because no maintained
 * libseccomp binding exists for Node. bwrap takes the compiled classic-BPF program: an array
 * of `struct sock_filter { u16 code; u8 jt; u8 jf; u32 k; }` in native byte order, run by the
 * kernel on `struct seccomp_data { int nr; u32 arch; u64 ip; u64 args[6]; }` at every syscall.
 *
 * What it refuses, and why (the namespaces and capabilities already stop most of these; the
 * filter also removes the kernel attack surface behind them):
 * - new namespaces: unshare, setns, and clone with any CLONE_NEW* flag. clone3 passes its flags
 *   in memory a filter cannot read, so it gets ENOSYS, on which glibc falls back to clone.
 * - mounting: mount, umount2, pivot_root and the new mount API (fsopen ... mount_setattr);
 *   open_by_handle_at (the classic container escape through file handles).
 * - kernel interfaces with a history of privilege escalations, useless to a shell: keyctl,
 *   add_key, request_key, bpf, perf_event_open, userfaultfd, io_uring_* (its operations are not
 *   seen by seccomp at all), kexec_*, *_module, acct, swapon/off, reboot, syslog, quotactl*,
 *   lookup_dcookie, vhangup, iopl, ioperm.
 * ptrace stays allowed (strace, gdb): every process in the sandbox is under this filter (the
 * sandbox runs with --as-pid-1, so there is no unfiltered bwrap init to take over), tracees are
 * only the computer's own processes, and kernels since 4.8 re-check seccomp after a tracer
 * changes a syscall.
 * Blocked calls fail with EPERM, as they would without privilege. An unknown architecture
 * (e.g. a 32-bit binary on x86_64, whose numbers differ) kills the process: its numbers could
 * mean anything. x32 calls (nr | 0x40000000 on x86_64) fail with EPERM.
 */

const BPF_LD_W_ABS = 0x20;
const BPF_JEQ_K = 0x15;
const BPF_JGE_K = 0x35;
const BPF_JSET_K = 0x45;
const BPF_RET_K = 0x06;

const SECCOMP_RET_KILL_PROCESS = 0x80000000;
const SECCOMP_RET_ERRNO = 0x00050000;
const SECCOMP_RET_ALLOW = 0x7fff0000;
const EPERM = 1;
const ENOSYS = 38;

const OFFSET_NR = 0;
const OFFSET_ARCH = 4;
/** Low 32 bits of args[0] (little-endian: x86_64 and aarch64); every CLONE_NEW* flag is there. */
const OFFSET_ARG0_LOW = 16;

const X32_SYSCALL_BIT = 0x40000000;

/** CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET. (CLONE_NEWTIME, 0x80, is
 * only accepted by unshare and clone3: in clone's flags those bits are the exit signal.) */
export const CLONE_NAMESPACE_FLAGS =
  0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000;

export const BLOCKED_SYSCALLS: SyscallName[] = [
  "unshare",
  "setns",
  "mount",
  "umount2",
  "pivot_root",
  "fsopen",
  "fsconfig",
  "fsmount",
  "fspick",
  "move_mount",
  "open_tree",
  "mount_setattr",
  "open_by_handle_at",
  "keyctl",
  "add_key",
  "request_key",
  "bpf",
  "perf_event_open",
  "userfaultfd",
  "io_uring_setup",
  "io_uring_enter",
  "io_uring_register",
  "kexec_load",
  "kexec_file_load",
  "init_module",
  "finit_module",
  "delete_module",
  "acct",
  "swapon",
  "swapoff",
  "reboot",
  "syslog",
  "quotactl",
  "quotactl_fd",
  "lookup_dcookie",
  "vhangup",
  "iopl",
  "ioperm",
];

type Label = "allow" | "eperm" | "enosys" | "kill" | `arch:${string}` | `clone:${string}`;

interface Instruction {
  code: number;
  k: number;
  /** Jump targets, resolved to relative offsets once every label's position is known. */
  jt?: Label;
  jf?: Label;
}

/** A tiny assembler: instructions with symbolic forward jumps. */
class Program {
  readonly code: Instruction[] = [];
  private readonly labels = new Map<Label, number>();

  label(name: Label): void {
    this.labels.set(name, this.code.length);
  }

  load(offset: number): void {
    this.code.push({ code: BPF_LD_W_ABS, k: offset });
  }

  /** If A op k goes to `then`, else falls through to the next instruction. */
  jump(code: number, k: number, then: Label): void {
    this.code.push({ code, k, jt: then });
  }

  ret(k: number): void {
    this.code.push({ code: BPF_RET_K, k });
  }

  assemble(): Buffer {
    const out = Buffer.alloc(this.code.length * 8);
    this.code.forEach((ins, index) => {
      out.writeUInt16LE(ins.code, index * 8);
      out.writeUInt8(this.offset(index, ins.jt), index * 8 + 2);
      out.writeUInt8(this.offset(index, ins.jf), index * 8 + 3);
      out.writeUInt32LE(ins.k >>> 0, index * 8 + 4);
    });
    return out;
  }

  private offset(from: number, to: Label | undefined): number {
    if (to === undefined) return 0;
    const target = this.labels.get(to);
    if (target === undefined) throw new Error(`seccomp: undefined label ${to}`);
    const distance = target - from - 1;
    // cBPF jumps only go forward, at most 255 instructions.
    if (distance < 0 || distance > 255) throw new Error(`seccomp: jump to ${to} out of range`);
    return distance;
  }
}

function archBody(
  program: Program,
  name: string,
  table: Partial<Record<SyscallName, number>>,
): void {
  program.label(`arch:${name}`);
  program.load(OFFSET_NR);
  if (name === "x86_64") program.jump(BPF_JGE_K, X32_SYSCALL_BIT, "eperm");
  for (const syscall of BLOCKED_SYSCALLS) {
    const nr = table[syscall];
    if (nr !== undefined) program.jump(BPF_JEQ_K, nr, "eperm");
  }
  if (table.clone3 !== undefined) program.jump(BPF_JEQ_K, table.clone3, "enosys");
  if (table.clone !== undefined) program.jump(BPF_JEQ_K, table.clone, `clone:${name}`);
  program.ret(SECCOMP_RET_ALLOW);
  program.label(`clone:${name}`);
  program.load(OFFSET_ARG0_LOW);
  program.jump(BPF_JSET_K, CLONE_NAMESPACE_FLAGS, "eperm");
  program.ret(SECCOMP_RET_ALLOW);
}

/** The filter bytes to hand to bwrap (`--seccomp FD`), for x86_64 and aarch64 kernels. */
export function seccompFilter(): Buffer {
  if (!isLittleEndian()) throw new Error("seccomp: only little-endian hosts are supported");
  const program = new Program();
  program.load(OFFSET_ARCH);
  program.jump(BPF_JEQ_K, AUDIT_ARCH_X86_64, "arch:x86_64");
  program.jump(BPF_JEQ_K, AUDIT_ARCH_AARCH64, "arch:aarch64");
  program.ret(SECCOMP_RET_KILL_PROCESS);
  archBody(program, "x86_64", X86_64);
  archBody(program, "aarch64", AARCH64);
  program.label("eperm");
  program.ret(SECCOMP_RET_ERRNO | EPERM);
  program.label("enosys");
  program.ret(SECCOMP_RET_ERRNO | ENOSYS);
  return program.assemble();
}

function isLittleEndian(): boolean {
  return new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
}
