// A warning for `run` and `apply` that return a fetch `Response`. The runtime records what they
// return as JSON; a Response is not JSON, so a run's output and an apply's outcome become a
// description of it ("a Response", status, url) and the body the author wanted is lost. The
// type checker knows what a function returns, so this asks it rather than guessing from syntax.
//
// The program holds only the project's own modules (as parsed for the rest of the check) and the
// standard library with the DOM's fetch types; package imports stay unresolved (`any`), which
// keeps it fast and never reports a return type we cannot see.

import ts from "typescript";
import type { BuildWarning } from "./errors.ts";
import { unwrap } from "./literal.ts";
import { type ParsedModule, positionOf } from "./parse.ts";
import type { AgentState } from "./sources.ts";
import type { StaticTool } from "./tools.ts";

const CHECKED = ["run", "apply"] as const;
const LIBS = ["lib.es2022.d.ts", "lib.dom.d.ts"];

/** One warning per agent, tool and `run`/`apply` whose return type is (a Promise of) Response. */
export function responseReturnWarnings(states: AgentState[]): BuildWarning[] {
  const modules = new Map<string, ParsedModule>();
  for (const state of states) for (const mod of state.modules) modules.set(mod.file, mod);
  if (!states.some((s) => s.tools.length > 0)) return [];
  const checker = programOf(modules).getTypeChecker();
  const warnings: BuildWarning[] = [];
  for (const state of states) {
    const agentId = state.entry.agentId;
    for (const tool of state.tools) {
      if (!tool.name) continue;
      for (const [member, node] of implementations(tool)) {
        if (!returnsResponse(checker, node)) continue;
        warnings.push({
          code: "tool_returns_response",
          message:
            `agent "${agentId}", tool "${tool.name}": ${member} returns a fetch Response, which ` +
            `is not JSON; the runtime records only its status and url. Return the fields you ` +
            `need (e.g. \`return await response.json()\`)`,
          file: tool.mod.rel,
          ...positionOf(tool.mod, node),
          agentId,
          tool: tool.name,
          path: member,
          reason: "returns Response",
        });
      }
    }
  }
  return warnings;
}

function programOf(modules: Map<string, ParsedModule>): ts.Program {
  const options: ts.CompilerOptions = {
    noEmit: true,
    noResolve: true,
    allowJs: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    allowImportingTsExtensions: true,
    lib: LIBS,
    types: [],
    skipLibCheck: true,
  };
  const host = ts.createCompilerHost(options, true);
  const read = host.getSourceFile;
  // The project's modules as the check already parsed them, so their nodes are the checker's.
  host.getSourceFile = (file, language, onError, create) =>
    modules.get(file)?.source ?? read.call(host, file, language, onError, create);
  return ts.createProgram({ rootNames: [...modules.keys()], options, host });
}

/** The `run` / `apply` functions written in the defineTool() object literal. */
function implementations(tool: StaticTool): Array<[string, ts.Node]> {
  const arg = tool.call.arguments[0] && unwrap(tool.call.arguments[0]);
  if (!arg || !ts.isObjectLiteralExpression(arg)) return [];
  const found: Array<[string, ts.Node]> = [];
  for (const property of arg.properties) {
    const name = property.name && ts.isIdentifier(property.name) ? property.name.text : undefined;
    if (!name || !(CHECKED as readonly string[]).includes(name)) continue;
    if (ts.isMethodDeclaration(property)) found.push([name, property]);
    else if (ts.isPropertyAssignment(property)) found.push([name, unwrap(property.initializer)]);
  }
  return found;
}

function returnsResponse(checker: ts.TypeChecker, node: ts.Node): boolean {
  const type = checker.getTypeAtLocation(node);
  return type.getCallSignatures().some((signature) => {
    const returned = checker.getReturnTypeOfSignature(signature);
    return isResponse(checker.getAwaitedType(returned) ?? returned);
  });
}

function isResponse(type: ts.Type): boolean {
  if (type.isUnion()) return type.types.some(isResponse);
  return type.getSymbol()?.getName() === "Response";
}
