// What agent code names by id and the build can check before anything runs: the agents it
// delegates to (`useSubagent("researcher")`) and the connections it references
// (`connection("github")`). Only string literals are checked; an id computed at run time is
// checked when it is used (a delegation to an unknown agent fails its call).

import ts from "typescript";
import type { BuildError } from "./errors.ts";
import { AGENT_PACKAGE, errorAt, type ParsedModule } from "./parse.ts";

export interface Reference {
  mod: ParsedModule;
  /** The id when the argument is a string literal. */
  id?: string;
  node: ts.Node;
}

export interface References {
  subagents: Reference[];
  connections: Reference[];
}

const HOOKS = { useSubagent: "subagents", connection: "connections" } as const;
type Hook = keyof typeof HOOKS;

// A module shared by agents is walked once.
const cache = new WeakMap<ParsedModule, References>();

/** The `useSubagent(...)` and `connection(...)` calls of one module (imported from the SDK). */
export function findReferences(mod: ParsedModule): References {
  let found = cache.get(mod);
  if (!found) {
    found = walk(mod);
    cache.set(mod, found);
  }
  return found;
}

function walk(mod: ParsedModule): References {
  const named = new Map<string, Hook>();
  const namespaces = new Set<string>();
  for (const [local, binding] of mod.imports) {
    if (binding.specifier !== AGENT_PACKAGE) continue;
    if (binding.imported in HOOKS) named.set(local, binding.imported as Hook);
    if (binding.imported === "*") namespaces.add(local);
  }
  const found: References = { subagents: [], connections: [] };
  if (named.size === 0 && namespaces.size === 0) return found;
  const hookOf = (callee: ts.Expression): Hook | undefined => {
    if (ts.isIdentifier(callee)) return named.get(callee.text);
    if (
      ts.isPropertyAccessExpression(callee) &&
      ts.isIdentifier(callee.expression) &&
      namespaces.has(callee.expression.text) &&
      callee.name.text in HOOKS
    ) {
      return callee.name.text as Hook;
    }
    return undefined;
  };
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node)) {
      const hook = hookOf(node.expression);
      if (hook) {
        const arg = node.arguments[0];
        const id = arg && ts.isStringLiteralLike(arg) ? arg.text : undefined;
        found[HOOKS[hook]].push({ mod, node: arg ?? node, ...(id !== undefined ? { id } : {}) });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(mod.source);
  return found;
}

/** `useSubagent` ids that name no agent of the project, or the agent itself. */
export function subagentErrors(
  agentId: string,
  refs: readonly Reference[],
  agentIds: readonly string[],
): BuildError[] {
  const errors: BuildError[] = [];
  for (const ref of refs) {
    if (ref.id === undefined) continue;
    if (ref.id === agentId) {
      errors.push(
        errorAt(
          ref.mod,
          ref.node,
          "subagent_self",
          `Agent "${agentId}" cannot delegate to itself: useSubagent(${JSON.stringify(ref.id)}) would let each delegation start another without end`,
        ),
      );
    } else if (!agentIds.includes(ref.id)) {
      const list = agentIds.filter((id) => id !== agentId).join(", ") || "none";
      errors.push(
        errorAt(
          ref.mod,
          ref.node,
          "subagent_unknown",
          `useSubagent(${JSON.stringify(ref.id)}): the project has no agent "${ref.id}" (listed in opencomputer/project.ts, or opencomputer/agents/${ref.id}/agent.ts without one); its agents: ${list}`,
        ),
      );
    }
  }
  return errors;
}

/** `connection(id)` ids that no connection the agent may use declares. */
export function connectionErrors(
  agentId: string,
  refs: readonly Reference[],
  declared: readonly string[],
): BuildError[] {
  const errors: BuildError[] = [];
  for (const ref of refs) {
    if (ref.id === undefined || declared.includes(ref.id)) continue;
    errors.push(
      errorAt(
        ref.mod,
        ref.node,
        "connection_unknown",
        `connection(${JSON.stringify(ref.id)}): agent "${agentId}" has no connection "${ref.id}"; declare it with defineConnection({ id: ${JSON.stringify(ref.id)}, origin, headers }) in opencomputer/connections/ or opencomputer/agents/${agentId}/connections/ (declared: ${declared.join(", ") || "none"})`,
      ),
    );
  }
  return errors;
}
