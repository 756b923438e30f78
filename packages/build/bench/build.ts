// Build time of `opencomputer build`/`doctor`: the example project, and a generated project of
// 20 agents × 10 tools. "Cold" is a fresh process (no parsed modules, esbuild not started) with
// tsx's transform cache off in the loader child. Run from the repository root:
//
//   node --import tsx packages/build/bench/build.ts [--runs 3]
//
// The projects are written under packages/build/test-output (gitignored, inside the repository
// so the generated modules resolve `@opencomputer/agent`) and removed afterwards.

import { execFileSync } from "node:child_process";
import { cpSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { type BuildTimings, buildProject, checkProject } from "../src/index.ts";

const HERE = fileURLToPath(import.meta.url);
const OUTPUT = fileURLToPath(new URL("../test-output", import.meta.url));
const EXAMPLE = fileURLToPath(new URL("../../../examples/support", import.meta.url));

const { values } = parseArgs({
  options: {
    runs: { type: "string", default: "3" },
    // Internal: one measurement in this (fresh) process, printed as JSON.
    measure: { type: "string" },
    dir: { type: "string" },
  },
});

if (values.measure) {
  const run = values.measure === "check" ? checkProject : buildProject;
  const result = await run(values.dir!);
  if (result.errors.length > 0) throw new Error(JSON.stringify(result.errors.slice(0, 3)));
  process.stdout.write(JSON.stringify(result.timings));
  process.exit(0);
}

function generate(dir: string, agents: number, tools: number): void {
  for (let a = 0; a < agents; a++) {
    const agentDir = join(dir, "opencomputer", "agents", `agent-${a}`);
    mkdirSync(join(agentDir, "tools"), { recursive: true });
    writeFileSync(
      join(agentDir, "schemas.ts"),
      `export const reportSchema = {
  type: "object",
  properties: { summary: { type: "string" }, score: { type: "integer", minimum: 0 } },
  required: ["summary", "score"],
  additionalProperties: false,
} as const;
`,
    );
    const imports: string[] = [];
    const uses: string[] = [];
    for (let t = 0; t < tools; t++) {
      const result = t === 0;
      writeFileSync(
        join(agentDir, "tools", `tool-${t}.ts`),
        `import { defineTool } from "@opencomputer/agent";
${result ? 'import { reportSchema } from "../schemas.ts";\n' : ""}
export const tool${t} = defineTool({
  name: "agent_${a}_tool_${t}",
  description: "Tool ${t} of agent ${a}: looks something up and returns it",
  input: {
    type: "object",
    properties: { id: { type: "string" }, limit: { type: "integer", minimum: 1, maximum: 100 } },
    required: ["id"],
    additionalProperties: false,
  },
${result ? "  output: reportSchema,\n  result: true,\n" : ""}  async run({ input }) {
    return ${result ? "{ summary: String(input.id), score: 1 }" : "{ id: String(input.id), found: true }"};
  },
});
`,
      );
      imports.push(`import { tool${t} } from "./tools/tool-${t}.ts";`);
      // Half the tools are selected only under a condition, as agents commonly do.
      uses.push(
        t % 2 === 0
          ? `  useTool(tool${t});`
          : `  if (input.text?.includes("${t}")) useTool(tool${t});`,
      );
    }
    writeFileSync(
      join(agentDir, "agent.ts"),
      `import { useInput, useModel, useTool } from "@opencomputer/agent";
${imports.join("\n")}

export default function Agent() {
  useModel("anthropic/claude-sonnet-4.6");
  const input = useInput();
${uses.join("\n")}
  return "Agent ${a}: use the tools, then report.";
}
`,
    );
  }
}

function measure(mode: "check" | "build", dir: string): BuildTimings {
  const out = execFileSync(
    process.execPath,
    ["--import", "tsx", HERE, "--measure", mode, "--dir", dir],
    {
      env: { ...process.env, ...(process.env.BENCH_TSX_CACHE ? {} : { TSX_DISABLE_CACHE: "1" }) },
      encoding: "utf8",
    },
  );
  return JSON.parse(out) as BuildTimings;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

function report(label: string, runs: BuildTimings[]): void {
  const total = median(runs.map((r) => r.totalMs));
  const parse = median(runs.map((r) => r.parseMs));
  const analyze = median(runs.map((r) => r.analyzeMs));
  const load = median(runs.map((r) => r.loadMs));
  const bundle = median(runs.map((r) => r.bundleMs));
  const write = median(runs.map((r) => r.writeMs));
  const pct = (ms: number) => `${((ms / total) * 100).toFixed(1)}%`;
  console.log(
    `${label.padEnd(34)} total ${total.toFixed(0).padStart(5)} ms | parse ${parse.toFixed(0)} ms (${pct(parse)}) | static ${analyze.toFixed(0)} ms (${pct(analyze)}) | load ${load.toFixed(0)} ms | bundle ${bundle.toFixed(0)} ms | write ${write.toFixed(0)} ms   [median of ${runs.length}, totals ${runs.map((r) => r.totalMs.toFixed(0)).join("/")}]`,
  );
}

const runs = Number(values.runs);
const root = join(OUTPUT, `bench-${process.pid}`);
try {
  const example = join(root, "example");
  cpSync(EXAMPLE, example, {
    recursive: true,
    filter: (src) => !src.includes(".opencomputer") && !src.includes("node_modules"),
  });
  const generated = join(root, "generated");
  generate(generated, 20, 10);

  for (const [name, dir] of [
    ["examples/support", example],
    ["generated 20 agents x 10 tools", generated],
  ] as const) {
    const check: BuildTimings[] = [];
    const build: BuildTimings[] = [];
    for (let i = 0; i < runs; i++) {
      check.push(measure("check", dir));
      rmSync(join(dir, ".opencomputer"), { recursive: true, force: true });
      build.push(measure("build", dir));
    }
    report(`${name}: doctor (cold)`, check);
    report(`${name}: build (cold)`, build);
    report(`${name}: build again (unchanged)`, [measure("build", dir)]);
  }
} finally {
  rmSync(root, { recursive: true, force: true });
}
