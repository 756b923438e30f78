// Bundles one agent with esbuild into a single ES module the runtime imports. The generated
// entry also exports every module the agent loads as a namespace, so the runtime can find each
// tool the deployment recorded and check it before anything runs.

import { build, type Message } from "esbuild";
import type { BuildError } from "./errors.ts";
import type { Project } from "./project.ts";
import { relativePath } from "./project.ts";

/**
 * Kept out of the bundle so the agent uses the runtime's copy of the SDK (resolved from the
 * deployment's directory, i.e. the project's own install), one copy for hooks and tools.
 */
const EXTERNAL = ["@opencomputer/agent", "@opencomputer/agent/*"];

// An ES module bundle has no `require`; CommonJS dependencies that call it need one.
const BANNER =
  'import { createRequire as __ocCreateRequire } from "node:module";\nconst require = __ocCreateRequire(import.meta.url);';

export interface BundleInput {
  agentId: string;
  agentFile: string;
  /** Absolute paths of every project module the agent loads. */
  modules: readonly string[];
}

/** The text of the generated entry: the agent's default export and its modules as namespaces. */
export function entrySource(project: Project, input: BundleInput): string {
  const modules = [...input.modules].map((file) => relativePath(project, file)).sort();
  const lines = [
    `import agent from ${JSON.stringify(`./${relativePath(project, input.agentFile)}`)};`,
  ];
  for (const [i, rel] of modules.entries()) {
    lines.push(`import * as m${i} from ${JSON.stringify(`./${rel}`)};`);
  }
  lines.push("export { agent };", "export const toolModules = {");
  for (const [i, rel] of modules.entries()) lines.push(`  ${JSON.stringify(rel)}: m${i},`);
  lines.push("};");
  return `${lines.join("\n")}\n`;
}

export async function bundleAgent(
  project: Project,
  input: BundleInput,
): Promise<{ code?: Uint8Array; errors: BuildError[] }> {
  try {
    const result = await build({
      stdin: {
        contents: entrySource(project, input),
        resolveDir: project.root,
        sourcefile: `<${input.agentId} entry>`,
        loader: "js",
      },
      // Paths in the output (comments) are relative to this, so the bundle does not depend on
      // where the project is checked out.
      absWorkingDir: project.root,
      bundle: true,
      format: "esm",
      platform: "node",
      target: "node20",
      external: EXTERNAL,
      banner: { js: BANNER },
      write: false,
      logLevel: "silent",
      legalComments: "inline",
    });
    const file = result.outputFiles[0];
    return file ? { code: file.contents, errors: [] } : { errors: [] };
  } catch (error) {
    const messages = (error as { errors?: Message[] }).errors;
    if (!Array.isArray(messages)) throw error;
    return { errors: messages.map((m) => bundleError(input, m)) };
  }
}

function bundleError(input: BundleInput, message: Message): BuildError {
  const location = message.location;
  return {
    code: "bundle_failed",
    message: `Bundling agent "${input.agentId}": ${message.text}`,
    file: location?.file ?? `opencomputer/agents/${input.agentId}/agent.ts`,
    line: location?.line ?? 1,
    column: (location?.column ?? 0) + 1,
  };
}
