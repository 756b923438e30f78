/**
 * Syscall numbers per architecture for the seccomp filter (seccomp.ts). x86_64 from
 * asm/unistd_64.h, aarch64 from asm-generic/unistd.h (checked against the headers). A name
 * missing from an architecture's table simply has no syscall there (iopl on aarch64).
 */

/** audit.h: the value the kernel puts in seccomp_data.arch. */
export const AUDIT_ARCH_X86_64 = 0xc000003e;
export const AUDIT_ARCH_AARCH64 = 0xc00000b7;

export type SyscallName =
  | "unshare"
  | "setns"
  | "clone"
  | "clone3"
  | "mount"
  | "umount2"
  | "pivot_root"
  | "fsopen"
  | "fsconfig"
  | "fsmount"
  | "fspick"
  | "move_mount"
  | "open_tree"
  | "mount_setattr"
  | "open_by_handle_at"
  | "keyctl"
  | "add_key"
  | "request_key"
  | "bpf"
  | "perf_event_open"
  | "userfaultfd"
  | "io_uring_setup"
  | "io_uring_enter"
  | "io_uring_register"
  | "kexec_load"
  | "kexec_file_load"
  | "init_module"
  | "finit_module"
  | "delete_module"
  | "acct"
  | "swapon"
  | "swapoff"
  | "reboot"
  | "syslog"
  | "quotactl"
  | "quotactl_fd"
  | "lookup_dcookie"
  | "vhangup"
  | "iopl"
  | "ioperm";

export const X86_64: Partial<Record<SyscallName, number>> = {
  unshare: 272,
  setns: 308,
  clone: 56,
  clone3: 435,
  mount: 165,
  umount2: 166,
  pivot_root: 155,
  fsopen: 430,
  fsconfig: 431,
  fsmount: 432,
  fspick: 433,
  move_mount: 429,
  open_tree: 428,
  mount_setattr: 442,
  open_by_handle_at: 304,
  keyctl: 250,
  add_key: 248,
  request_key: 249,
  bpf: 321,
  perf_event_open: 298,
  userfaultfd: 323,
  io_uring_setup: 425,
  io_uring_enter: 426,
  io_uring_register: 427,
  kexec_load: 246,
  kexec_file_load: 320,
  init_module: 175,
  finit_module: 313,
  delete_module: 176,
  acct: 163,
  swapon: 167,
  swapoff: 168,
  reboot: 169,
  syslog: 103,
  quotactl: 179,
  quotactl_fd: 443,
  lookup_dcookie: 212,
  vhangup: 153,
  iopl: 172,
  ioperm: 173,
};

export const AARCH64: Partial<Record<SyscallName, number>> = {
  unshare: 97,
  setns: 268,
  clone: 220,
  clone3: 435,
  mount: 40,
  umount2: 39,
  pivot_root: 41,
  fsopen: 430,
  fsconfig: 431,
  fsmount: 432,
  fspick: 433,
  move_mount: 429,
  open_tree: 428,
  mount_setattr: 442,
  open_by_handle_at: 265,
  keyctl: 219,
  add_key: 217,
  request_key: 218,
  bpf: 280,
  perf_event_open: 241,
  userfaultfd: 282,
  io_uring_setup: 425,
  io_uring_enter: 426,
  io_uring_register: 427,
  kexec_load: 104,
  kexec_file_load: 294,
  init_module: 105,
  finit_module: 273,
  delete_module: 106,
  acct: 89,
  swapon: 224,
  swapoff: 225,
  reboot: 142,
  syslog: 116,
  quotactl: 60,
  quotactl_fd: 443,
  lookup_dcookie: 18,
  vhangup: 58,
};
