import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, watch, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { OpenComputerError } from "@opencomputer/agent";
import {
  buildIsolation,
  buildProject,
  createDeploymentAgents,
  createDeploymentCatalog,
  formatErrors,
} from "@opencomputer/build";
import { consoleDistDir } from "@opencomputer/console";
import { createMcpConnector } from "@opencomputer/mcp";
import { createModelResolver, createScriptModel, defaultProviders } from "@opencomputer/models";
import { createRuntime } from "@opencomputer/runtime";
import { createHandler, createKeyFileAuth, KeyFile, serve } from "@opencomputer/server";
import { createOtlpTracing, tracingConfig } from "@opencomputer/telemetry";
import { noExtra, parse } from "../args.ts";
import { projectLabelBudgets } from "../budgets.ts";
import { projectComputers } from "../computers.ts";
import { projectEgress } from "../egress.ts";
import { startEventDelivery } from "../event-delivery.ts";
import { cliExecution, startExecution } from "../execution.ts";
import { projectPricer } from "../prices.ts";
import { openStore } from "../store-url.ts";
import { startTriggers } from "../triggers.ts";
import { keyFilePath } from "./keys.ts";

/**
 * `opencomputer dev [--dir DIR] [--port N]`: builds, serves the API with the runtime on the
 * embedded store, and rebuilds when sources change (new sessions get the new deployment).
 * `opencomputer server --store <path|postgres://…> [--dir DIR] [--port N]`: the same without
 * watching, on the store given. Keys: `OPENCOMPUTER_API_KEY` (dev prints a fresh one when unset)
 * or `OPENCOMPUTER_API_KEYS` (comma-separated).
 */
export async function serveCommand(argv: string[], mode: "dev" | "server"): Promise<number> {
  const { projectDir, port, store } = serveOptions(argv, mode);
  // Start-up and every dev rebuild load the project's code, confined as workers are (issue #21).
  const isolation = buildIsolation(projectDir);
  if (isolation.kind !== "sandbox") process.stderr.write(`warning: ${isolation.description}\n`);
  const build = async () => {
    const built = await buildProject(projectDir, { isolation });
    if (built.errors.length > 0) process.stderr.write(`${formatErrors(built.errors)}\n`);
    else for (const d of built.deployments) process.stdout.write(`deployed ${d.agentId} ${d.id}\n`);
    return built.errors.length === 0;
  };
  // A server may start empty and receive its agents from `opencomputer deploy`.
  const hasSources = existsSync(join(projectDir, "opencomputer", "agents"));
  if (mode === "server" && !hasSources) {
    process.stdout.write(
      `No agents in ${projectDir}/opencomputer/agents: serving what \`opencomputer deploy\` uploads\n`,
    );
  } else if (!(await build())) return 1;

  const stack = await startStack(projectDir, mode, store);
  const { runtime, opened } = stack;
  const keys = apiKeys(projectDir, mode);
  const triggers = startTriggers(projectDir, runtime, opened.triggers);
  const delivery = startEventDelivery(runtime.runtimeId, opened.deliveries, mode === "dev");
  const handler = createHandler({
    runtime,
    auth: createKeyFileAuth(keyFilePath(projectDir), keys.accepted),
    catalog: createDeploymentCatalog(projectDir, { isolation }),
    console: { dir: consoleDistDir },
    usage: opened.usage,
    ...triggers.handler,
    ...delivery.handler,
  });
  const served = await serve(handler, { port });
  process.stdout.write(`OpenComputer ${mode} listening on ${served.url}\n`);
  process.stdout.write(`Console: ${served.url}/console/\n`);
  process.stdout.write(`Store: ${opened.description}\n`);
  process.stdout.write(`Execution: ${stack.executionDescription}\n`);
  process.stdout.write(`Build: ${isolation.description}\n`);
  process.stdout.write(`Tracing: ${tracingConfig().reason}\n`);
  if (keys.printed) process.stdout.write(`API key: ${keys.printed}\n`);

  let watcher: ReturnType<typeof watch> | undefined;
  if (mode === "dev") {
    let timer: NodeJS.Timeout | undefined;
    watcher = watch(join(projectDir, "opencomputer"), { recursive: true }, () => {
      clearTimeout(timer);
      timer = setTimeout(() => void build(), 200);
    });
  }
  await new Promise<void>((done) => {
    process.once("SIGINT", done);
    process.once("SIGTERM", done);
  });
  watcher?.close();
  await served.close();
  await triggers.close();
  await delivery.close();
  await stack.close();
  return 0;
}

function serveOptions(argv: string[], mode: "dev" | "server") {
  const usage = `opencomputer ${mode} [--dir DIR] [--port N]${mode === "server" ? " --store <file.db|postgres://…>" : ""}`;
  const options = {
    dir: { type: "string" },
    port: { type: "string" },
    store: { type: "string" },
  } as const;
  const { values, positionals } = parse(argv, options, usage);
  noExtra(positionals, 0, usage);
  const projectDir = resolve(values.dir ?? ".");
  const port = values.port === undefined ? 4600 : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new OpenComputerError("usage", "--port must be 0..65535");
  if (mode === "server" && !values.store)
    throw new OpenComputerError("usage", "server needs --store <file.db|postgres://…>");
  return { projectDir, port, store: values.store };
}

/** The store, the runtime and what it runs with (computers, egress, workers, tracing). */
async function startStack(projectDir: string, mode: "dev" | "server", storeUrl?: string) {
  const opened = await openStore(storeUrl ?? join(projectDir, ".opencomputer", "data.db"));
  const { store } = opened;
  const computers = projectComputers(projectDir, (sessionId, change) => {
    void runtime.sessions
      .recordComputer(sessionId, change)
      .catch((error: unknown) =>
        process.stderr.write(`warning: computer state not recorded: ${String(error)}\n`),
      );
  });
  const egress = projectEgress({
    projectDir,
    devMode: mode === "dev",
    store,
    runtime: () => runtime,
  });
  const execution = cliExecution(projectDir);
  const agents = createDeploymentAgents(projectDir);
  const running = startExecution(execution, agents);
  const tracing = createOtlpTracing();
  const runtime = createRuntime({
    ...(tracing ? { tracing } : {}),
    ...opened.runtimeOptions,
    ...projectLabelBudgets(projectDir, opened.usage),
    egress: egress.source,
    store,
    builtInTools: computers.tools,
    agents,
    execution: running.execution,
    // The control plane holds the MCP clients; plain-http loopback servers only in dev.
    mcp: { connector: createMcpConnector({ allowLoopbackHttp: mode === "dev" }) },
    models: createModelResolver({
      providers: { ...defaultProviders(), script: createScriptModel },
      pricer: projectPricer(projectDir),
    }),
  });
  await runtime.start();
  return {
    runtime,
    opened,
    executionDescription: execution.description,
    async close() {
      await runtime.close();
      await tracing?.close();
      await running.close();
      await egress.close();
      await computers.close();
      await opened.close();
    },
  };
}

/** The keys the API accepts besides the key file's, and the one dev prints. */
function apiKeys(projectDir: string, mode: "dev" | "server") {
  const accepted = (process.env.OPENCOMPUTER_API_KEYS ?? process.env.OPENCOMPUTER_API_KEY ?? "")
    .split(",")
    .map((k) => k.trim())
    .filter(Boolean);
  let printed: string | undefined;
  if (mode === "dev") {
    // dev keeps one development key in clear (0600, under .opencomputer) so every run prints it.
    printed = accepted[0] ?? devKey(projectDir);
    if (!accepted.includes(printed)) accepted.push(printed);
  } else if (
    accepted.length === 0 &&
    new KeyFile(keyFilePath(projectDir)).list().every((k) => k.revokedAt)
  ) {
    throw new OpenComputerError(
      "usage",
      "no API keys: run `opencomputer keys create` or set OPENCOMPUTER_API_KEYS",
    );
  }
  return { accepted, printed };
}

function devKey(projectDir: string): string {
  const path = join(projectDir, ".opencomputer", "dev-key");
  if (existsSync(path)) return readFileSync(path, "utf8").trim();
  const key = `oc_dev_${randomBytes(18).toString("base64url")}`;
  writeFileSync(path, `${key}\n`, { mode: 0o600 });
  return key;
}
