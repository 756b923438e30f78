import { type ChildProcess, spawn } from "node:child_process";
import { cpSync, mkdirSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";

const repo = resolve(import.meta.dirname, "../../..");
const bin = join(repo, "packages/cli/bin/opencomputer.js");

export interface DevServer {
  url: string;
  key: string;
  child: ChildProcess;
  /** Kills the server and removes its project. */
  stop(): void;
}

/**
 * Starts `opencomputer dev` on a copy of a project (examples/support unless `source` says
 * otherwise; the copy is inside the repository, so its
 * `@opencomputer/agent` import resolves as a user's would) with the scripted model, and
 * resolves with the URL and key it prints.
 */
export function startDev(
  name: string,
  source = join(repo, "examples/support"),
  model = "script/demo",
): Promise<DevServer> {
  const project = join(repo, "test-output", `${name}-${process.pid}`);
  mkdirSync(project, { recursive: true });
  cpSync(join(source, "opencomputer"), join(project, "opencomputer"), { recursive: true });
  const child = spawn(process.execPath, [bin, "dev", "--dir", project, "--port", "0"], {
    env: { ...process.env, OPENCOMPUTER_MODEL: model, OPENCOMPUTER_API_KEY: "" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const stop = () => {
    child.kill("SIGKILL");
    rmSync(project, { recursive: true, force: true });
  };
  return new Promise((done, fail) => {
    let out = "";
    child.stdout!.on("data", (chunk) => {
      out += String(chunk);
      const url = /listening on (\S+)/.exec(out)?.[1];
      const key = /API key: (\S+)/.exec(out)?.[1];
      if (url && key) done({ url, key, child, stop });
    });
    child.once("exit", (code) => fail(new Error(`dev exited ${code}: ${out}`)));
  });
}
