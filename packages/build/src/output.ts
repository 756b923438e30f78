// Copies a result tool's `output` schema out of the source. The seed accepts three forms: an
// object literal in the defineTool() call, a `const` object literal in the same module, and a
// named import of such a const from a module inside the agent directory (followed through
// `import { x } ...; export { x }` chains that stay inside). Everything else is refused with
// the form it has, because the build never runs code to find the schema.

import ts from "typescript";
import type { BuildError } from "./errors.ts";
import type { ModuleGraph } from "./graph.ts";
import { type JsonValue, readJsonLiteral, refuseForm, unwrap } from "./literal.ts";
import { errorAt, type ImportBinding, type ParsedModule, snippet } from "./parse.ts";
import { isInside } from "./project.ts";
import type { StaticTool } from "./tools.ts";

export interface OutputContext {
  graph: ModuleGraph;
  /** Absolute agent directory: named imports of the schema must stay inside it. */
  agentDir: string;
}

type Outcome = { value?: JsonValue; errors: BuildError[] };

/** The result tool's output schema as written, or the errors that say why it cannot be read. */
export function extractOutput(tool: StaticTool, context: OutputContext): Outcome {
  if (!tool.output) return { errors: [] };
  const where = `output of tool "${tool.name ?? "?"}"`;
  return new Extraction(context).schema(tool.mod, tool.output, where);
}

class Extraction {
  // Bindings being followed, to refuse `const a = b; const b = a` instead of looping.
  private readonly following = new Set<string>();

  constructor(private readonly context: OutputContext) {}

  schema(mod: ParsedModule, expression: ts.Expression, where: string): Outcome {
    const e = unwrap(expression);
    const isNamespace = (name: string) => mod.imports.get(name)?.imported === "*";
    if (ts.isObjectLiteralExpression(e)) return readJsonLiteral(mod, e, where, isNamespace);
    if (ts.isIdentifier(e)) return this.binding(mod, e.text, e, where);
    return fail(refuseForm(mod, e, where, isNamespace));
  }

  private binding(mod: ParsedModule, name: string, ref: ts.Node, where: string): Outcome {
    const key = `${mod.file}\0${name}`;
    if (this.following.has(key)) {
      return fail(
        errorAt(
          mod,
          ref,
          "output_circular",
          `${where} refers to \`${name}\`, whose definition refers back to itself`,
        ),
      );
    }
    this.following.add(key);
    try {
      const imported = mod.imports.get(name);
      if (imported) return this.importBinding(mod, name, imported, where);
      return this.localBinding(mod, name, ref, where);
    } finally {
      this.following.delete(key);
    }
  }

  private localBinding(mod: ParsedModule, name: string, ref: ts.Node, where: string): Outcome {
    const binding = mod.topLevel.get(name);
    const named = `${where} refers to \`${name}\``;
    if (!binding) {
      return fail(
        errorAt(
          mod,
          ref,
          "output_not_static",
          `${named}, which is not a top-level const or import of ${mod.rel}; declare the schema as a top-level const object literal`,
        ),
      );
    }
    if (binding.kind === "let" || binding.kind === "var") {
      return fail(
        errorAt(
          mod,
          binding.node,
          binding.kind === "let" ? "output_let_binding" : "output_var_binding",
          `${named}, a \`${binding.kind}\` binding: it can be reassigned, so its literal need not be the value the tool gets; declare it with const`,
        ),
      );
    }
    if (binding.kind !== "const") {
      return fail(
        errorAt(
          mod,
          binding.node,
          "output_not_static",
          `${named}, a ${binding.kind === "other" ? "declaration" : `${binding.kind} declaration`}, not a const object literal`,
        ),
      );
    }
    if (binding.destructured || !binding.initializer) {
      return fail(
        errorAt(
          mod,
          binding.node,
          "output_not_static",
          `${named}, a const ${binding.destructured ? "taken apart by destructuring" : "without an initialiser"}, not a const object literal`,
        ),
      );
    }
    return this.schema(mod, binding.initializer, `\`${name}\` (${where})`);
  }

  private importBinding(
    mod: ParsedModule,
    name: string,
    binding: ImportBinding,
    where: string,
  ): Outcome {
    const named = `${where} refers to \`${name}\``;
    if (binding.imported === "*") {
      return fail(
        errorAt(
          mod,
          binding.node,
          "output_namespace_member",
          `${named}, a whole namespace import (${snippet(mod, binding.node)}); import the schema const by name`,
        ),
      );
    }
    if (binding.imported === "default") {
      return fail(
        errorAt(
          mod,
          binding.node,
          "output_not_static",
          `${named}, a default import; export the schema as a named const and import it by name`,
        ),
      );
    }
    const target = this.context.graph.resolve(mod.file, binding.specifier);
    const from = JSON.stringify(binding.specifier);
    if (target.kind === "package") {
      return fail(
        errorAt(
          mod,
          binding.node,
          "output_package_import",
          `${named}, imported from the package ${from}; the build copies only schemas written in the agent directory, so write it there as a const object literal`,
        ),
      );
    }
    if (target.kind === "missing") {
      return fail(
        errorAt(
          mod,
          binding.node,
          "import_not_found",
          `Cannot find module ${from} from ${mod.rel}`,
        ),
      );
    }
    if (target.kind !== "module" || !isInside(this.context.agentDir, target.file)) {
      return fail(
        errorAt(
          mod,
          binding.node,
          target.kind === "asset" ? "output_not_static" : "output_import_outside_agent",
          target.kind === "asset"
            ? `${named}, imported from the data file ${from}; write the schema as a const object literal`
            : `${named}, imported from ${from}, which is outside the agent directory; move the schema into the agent directory`,
        ),
      );
    }
    return this.exported(
      this.context.graph.module(target.file),
      binding.imported,
      mod,
      binding.node,
      where,
    );
  }

  private exported(
    target: ParsedModule,
    exportedName: string,
    importer: ParsedModule,
    importNode: ts.Node,
    where: string,
  ): Outcome {
    const exported = target.exports.get(exportedName);
    if (exported?.kind === "local")
      return this.binding(target, exported.local, exported.node, where);
    if (exported?.kind === "reexport") {
      return fail(
        errorAt(
          target,
          exported.node,
          "output_reexport",
          `${where} comes through a re-export (export ... from ${JSON.stringify(exported.specifier)}) in ${target.rel}; import the schema from the module that declares it`,
        ),
      );
    }
    if (exported?.kind === "expression") {
      return fail(
        errorAt(
          target,
          exported.node,
          "output_not_static",
          `${where} is an anonymous default export`,
        ),
      );
    }
    const star = target.exportStars[0];
    if (star) {
      return fail(
        errorAt(
          target,
          star.node,
          "output_reexport",
          `${where}: \`${exportedName}\` is not declared in ${target.rel} and may come through the re-export \`${snippet(target, star.node)}\`; import the schema from the module that declares it`,
        ),
      );
    }
    return fail(
      errorAt(
        importer,
        importNode,
        "output_export_not_found",
        `${where}: ${target.rel} does not export \`${exportedName}\``,
      ),
    );
  }
}

function fail(error: BuildError): Outcome {
  return { errors: [error] };
}
