// Runs in a child process (`node --import tsx upload-child.ts <dir> <agentId> <deploymentId>`),
// confined like the build's other loads but seeing only the uploaded deployment and the
// project's packages: the load-time check a worker does before any session runs the code
// (the content matches its id, the bundle imports, its tools are the manifest's). Sends
// `{ok: true}` or `{ok: false, message}`, then waits to be killed.

import { awaitKill } from "./child-end.ts";
import { loadAgent } from "./deployment-load.ts";

async function main(): Promise<void> {
  const [dir = "", agentId = "", deploymentId = ""] = process.argv.slice(2);
  let answer: { ok: true } | { ok: false; message: string };
  try {
    await loadAgent({ dir, agentId, deploymentId });
    answer = { ok: true };
  } catch (error) {
    answer = { ok: false, message: (error as Error)?.message ?? String(error) };
  }
  await new Promise<void>((resolve) => process.send?.(answer, () => resolve()));
  awaitKill();
}

void main();
