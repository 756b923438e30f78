// What `opencomputer init` writes: a project that builds and runs offline at once (the scripted
// model answers from opencomputer/scripts/demo.json) and type-checks under `tsc --strict`.

import { aliasSpec, publishedName } from "./package-names.ts";

export interface ProjectTemplate {
  /** The project's name (package.json, opencomputer/project.ts). */
  name: string;
  /** The one agent's id: opencomputer/agents/<agent>/agent.ts. */
  agent: string;
  /** The version of our packages to depend on (the CLI's own). */
  version: string;
}

/** Relative path → file text, in the order they are written. */
export function projectFiles(t: ProjectTemplate): Map<string, string> {
  return new Map([
    ["package.json", json(packageJson(t))],
    ["tsconfig.json", json(TSCONFIG)],
    [".gitignore", GITIGNORE],
    ["opencomputer/project.ts", projectTs(t)],
    [`opencomputer/agents/${t.agent}/agent.ts`, AGENT_TS],
    ["opencomputer/scripts/demo.json", json(DEMO_SCRIPT)],
  ]);
}

function packageJson(t: ProjectTemplate): object {
  return {
    name: t.name,
    version: "0.1.0",
    private: true,
    type: "module",
    scripts: {
      dev: "opencomputer dev",
      build: "opencomputer build",
      doctor: "opencomputer doctor",
      typecheck: "tsc",
    },
    dependencies: {
      // Agent code imports `@opencomputer/agent`; npm installs our published package there.
      "@opencomputer/agent": aliasSpec("@opencomputer/agent", t.version),
      [publishedName("opencomputer")]: t.version,
    },
    devDependencies: {
      "@types/node": "^20.19.0",
      typescript: "5.9.3",
    },
    engines: { node: ">=20.19.0" },
  };
}

// The runtime runs agent code through tsx: `.ts` imports need no build step, and `noEmit` keeps
// tsc a checker only.
const TSCONFIG = {
  compilerOptions: {
    target: "ES2022",
    module: "ESNext",
    moduleResolution: "Bundler",
    lib: ["ES2023"],
    types: ["node"],
    strict: true,
    noEmit: true,
    allowImportingTsExtensions: true,
    verbatimModuleSyntax: true,
    isolatedModules: true,
  },
  include: ["opencomputer"],
};

const GITIGNORE = `node_modules/
# The embedded store, deployments, API keys and encrypted secrets of this checkout.
.opencomputer/
# Development secrets.
.env.local
`;

function projectTs(t: ProjectTemplate): string {
  return `// The project: its name and the agents it deploys, each in opencomputer/agents/<id>/agent.ts.
export default {
  name: ${JSON.stringify(t.name)},
  agents: [${JSON.stringify(t.agent)}],
};
`;
}

const AGENT_TS = `import { defineTool, useModel, useTool } from "@opencomputer/agent";

// A tool the model may call: \`input\` is the JSON Schema of its arguments, \`run\` returns JSON.
export const countWords = defineTool({
  name: "count_words",
  description: "Count the words in a piece of text",
  input: {
    type: "object",
    properties: { text: { type: "string", description: "The text to count" } },
    required: ["text"],
    additionalProperties: false,
  },
  async run({ input }) {
    const words = String(input.text).split(/\\s+/).filter(Boolean).length;
    return { words };
  },
});

// The result tool: its value, checked against \`output\`, is the session's result.
const summary = {
  type: "object",
  properties: {
    words: { type: "integer", description: "How many words the text has" },
    summary: { type: "string", description: "One sentence for the user" },
  },
  required: ["words", "summary"],
  additionalProperties: false,
} as const;

export const report = defineTool({
  name: "report",
  description: "Report the word count as the session's result",
  input: summary,
  output: summary,
  result: true,
  async run({ input }) {
    return { words: Number(input.words), summary: String(input.summary) };
  },
});

export default function Agent() {
  useModel("anthropic/claude-sonnet-4.6");
  useTool(countWords);
  useTool(report);
  return "Count the words of the text the user sends with count_words, then call report.";
}
`;

// Three steps per message (the tool, the result tool, the answer), played again for every
// further message: \`repeatFrom\` makes the script answer any number of them.
const DEMO_SCRIPT = {
  steps: [
    {
      text: "Let me count them.",
      toolCalls: [{ name: "count_words", input: { text: "the quick brown fox" } }],
    },
    {
      toolCalls: [{ name: "report", input: { words: 4, summary: "The text has 4 words." } }],
    },
    { text: "The text has 4 words." },
  ],
  repeatFrom: 0,
};

function json(value: object): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}
