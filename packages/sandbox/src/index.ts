export type { GroupLimits } from "./cgroup-layouts.ts";
export {
  type CgroupStatus,
  type Cgroups,
  type ComputerGroup,
  DEFAULT_CGROUP_ROOT,
  detectCgroups,
} from "./cgroups.ts";
export { ensureOwnedDir, type OwnedDirOptions, UnsafeDirectoryError } from "./owned-dir.ts";
export {
  openRegularNoFollow,
  readRegularNoFollow,
  type SafeOpenOptions,
  UnsafeFileError,
  type UnsafeFileReason,
} from "./safe-file.ts";
export {
  BubblewrapMissingError,
  discoverSandboxHost,
  SANDBOX_GID,
  SANDBOX_UID,
  type SandboxHost,
} from "./sandbox-host.ts";
export { BLOCKED_SYSCALLS, CLONE_NAMESPACE_FLAGS, seccompFilter } from "./seccomp.ts";
export { AARCH64, AUDIT_ARCH_AARCH64, AUDIT_ARCH_X86_64, X86_64 } from "./seccomp-syscalls.ts";
export { measureTree, type TreeBounds, type TreeUsage } from "./tree-usage.ts";
