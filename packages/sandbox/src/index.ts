export type { GroupLimits } from "./cgroup-layouts.ts";
export {
  type CgroupStatus,
  type Cgroups,
  type ComputerGroup,
  DEFAULT_CGROUP_ROOT,
  detectCgroups,
} from "./cgroups.ts";
export {
  BubblewrapMissingError,
  discoverSandboxHost,
  SANDBOX_GID,
  SANDBOX_UID,
  type SandboxHost,
} from "./sandbox-host.ts";
