import { join } from "node:path";
import { BubblewrapComputerProvider, createShellTools } from "@opencomputer/computers";
import type { BuiltInTool, ComputerChange } from "@opencomputer/runtime";

/**
 * The `shell` / `sandbox_exec` tools on bubblewrap computers under `<project>/.opencomputer`.
 * Without bubblewrap the tools are not offered (an agent selecting them fails its render,
 * naming the ids that are): commands never run unsandboxed.
 */
export function projectComputers(
  projectDir: string,
  onChange: (sessionId: string, change: ComputerChange) => void,
): { tools: BuiltInTool[]; close(): Promise<void> } {
  try {
    const computers = new BubblewrapComputerProvider({
      rootDir: join(projectDir, ".opencomputer", "computers"),
      // The operator's package image for every computer, if any (agents cannot choose it).
      ...(process.env.OPENCOMPUTER_IMAGE_DIR
        ? { imageDir: process.env.OPENCOMPUTER_IMAGE_DIR }
        : {}),
      // Starts and releases show in session.runtime and the session's events.
      onLifecycle: ({ sessionId, ...change }) => onChange(sessionId, change),
    });
    return { tools: createShellTools(computers), close: () => computers.close() };
  } catch (error) {
    process.stderr.write(
      `warning: the shell tool is unavailable: ${(error as Error).message}\n` +
        "  run packages/computers/scripts/ensure-bubblewrap.sh (or install bubblewrap) to enable it\n",
    );
    return { tools: [], close: async () => {} };
  }
}
