// One module's syntax, reduced to what the build asks of it: its imports and exports, its
// top-level bindings, and its defineTool() calls. Only the parser runs (no type-checker
// program), so a project of hundreds of modules is read in well under a second.

import ts from "typescript";
import type { BuildError } from "./errors.ts";

/** The package whose `defineTool` marks a tool; tools made any other way are not recognised. */
export const AGENT_PACKAGE = "@opencomputer/agent";

export interface ImportBinding {
  specifier: string;
  /** The exported name, `"default"`, or `"*"` for `import * as ns`. */
  imported: string;
  /** The import specifier (or clause) that binds the name, for error positions. */
  node: ts.Node;
}

export type BindingKind = "const" | "let" | "var" | "function" | "class" | "other";

export interface TopLevelBinding {
  kind: BindingKind;
  /** The declared name, for error positions. */
  node: ts.Node;
  initializer?: ts.Expression;
  /** Declared through destructuring (`const { a } = x`), which has no literal of its own. */
  destructured: boolean;
}

export type ExportBinding =
  | { kind: "local"; local: string; node: ts.Node }
  | { kind: "reexport"; specifier: string; imported: string; node: ts.Node }
  | { kind: "expression"; expression: ts.Expression; node: ts.Node };

export interface ParsedModule {
  /** Absolute path. */
  file: string;
  /** Project-relative, `/`-separated. */
  rel: string;
  source: ts.SourceFile;
  imports: Map<string, ImportBinding>;
  topLevel: Map<string, TopLevelBinding>;
  exports: Map<string, ExportBinding>;
  /** `export * from "..."` declarations, which may hide where a name comes from. */
  exportStars: Array<{ specifier: string; node: ts.Node }>;
  /** Every module specifier that loads code at run time, in source order. */
  specifiers: Array<{ specifier: string; node: ts.Node }>;
  /** Calls of `defineTool` imported from `@opencomputer/agent` (directly or as `ns.defineTool`). */
  toolCalls: ts.CallExpression[];
  /** Calls of the hooks the build checks (`useTool`, `useModel`), found the same way. */
  hookCalls: { useTool: ts.CallExpression[]; useModel: ts.CallExpression[] };
  syntaxErrors: BuildError[];
}

export function parseModule(file: string, rel: string, text: string): ParsedModule {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, scriptKind(file));
  const mod: ParsedModule = {
    file,
    rel,
    source,
    imports: new Map(),
    topLevel: new Map(),
    exports: new Map(),
    exportStars: [],
    specifiers: [],
    toolCalls: [],
    hookCalls: { useTool: [], useModel: [] },
    syntaxErrors: syntaxErrors(source, rel),
  };
  for (const statement of source.statements) readStatement(mod, statement);
  findCalls(mod);
  return mod;
}

/** 1-based line and column of a node's first token (not its leading comments). */
export function positionOf(mod: ParsedModule, node: ts.Node): { line: number; column: number } {
  const { line, character } = mod.source.getLineAndCharacterOfPosition(node.getStart(mod.source));
  return { line: line + 1, column: character + 1 };
}

/** A BuildError placed at a node of a module. */
export function errorAt(
  mod: ParsedModule,
  node: ts.Node,
  code: string,
  message: string,
): BuildError {
  return { code, message, file: mod.rel, ...positionOf(mod, node) };
}

/** The source text of a node, shortened for messages. */
export function snippet(mod: ParsedModule, node: ts.Node, max = 60): string {
  const text = node.getText(mod.source).replace(/\s+/g, " ");
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

function scriptKind(file: string): ts.ScriptKind {
  if (file.endsWith(".tsx")) return ts.ScriptKind.TSX;
  if (file.endsWith(".jsx")) return ts.ScriptKind.JSX;
  if (/\.[cm]?js$/.test(file)) return ts.ScriptKind.JS;
  return ts.ScriptKind.TS;
}

// The parser records its diagnostics on the source file without exposing them in the public
// typings; reading them avoids analysing a half-parsed module and reporting nonsense about it.
function syntaxErrors(source: ts.SourceFile, rel: string): BuildError[] {
  const diagnostics = (source as unknown as { parseDiagnostics?: ts.DiagnosticWithLocation[] })
    .parseDiagnostics;
  return (diagnostics ?? []).map((d) => {
    const { line, character } = source.getLineAndCharacterOfPosition(d.start);
    return {
      code: "syntax_error",
      message: ts.flattenDiagnosticMessageText(d.messageText, "\n"),
      file: rel,
      line: line + 1,
      column: character + 1,
    };
  });
}

function hasModifier(node: ts.Node, kind: ts.SyntaxKind): boolean {
  return ts.canHaveModifiers(node) && (ts.getModifiers(node) ?? []).some((m) => m.kind === kind);
}

function readStatement(mod: ParsedModule, statement: ts.Statement): void {
  if (ts.isImportDeclaration(statement)) {
    readImport(mod, statement);
    return;
  }
  if (ts.isExportDeclaration(statement)) {
    readExport(mod, statement);
    return;
  }
  if (ts.isExportAssignment(statement)) {
    // `export default x` names a local binding; anything else is an anonymous value.
    const expression = statement.expression;
    mod.exports.set(
      "default",
      ts.isIdentifier(expression)
        ? { kind: "local", local: expression.text, node: statement }
        : { kind: "expression", expression, node: statement },
    );
    return;
  }
  const exported = hasModifier(statement, ts.SyntaxKind.ExportKeyword);
  const isDefault = hasModifier(statement, ts.SyntaxKind.DefaultKeyword);
  if (ts.isVariableStatement(statement)) {
    if (hasModifier(statement, ts.SyntaxKind.DeclareKeyword)) return;
    const flags = statement.declarationList.flags;
    const kind: BindingKind =
      flags & ts.NodeFlags.Const ? "const" : flags & ts.NodeFlags.Let ? "let" : "var";
    for (const declaration of statement.declarationList.declarations) {
      for (const name of boundNames(declaration.name)) {
        mod.topLevel.set(name.text, {
          kind,
          node: name,
          ...(declaration.initializer ? { initializer: declaration.initializer } : {}),
          destructured: !ts.isIdentifier(declaration.name),
        });
        if (exported) mod.exports.set(name.text, { kind: "local", local: name.text, node: name });
      }
    }
    return;
  }
  if (
    ts.isFunctionDeclaration(statement) ||
    ts.isClassDeclaration(statement) ||
    ts.isEnumDeclaration(statement)
  ) {
    const kind: BindingKind = ts.isFunctionDeclaration(statement)
      ? "function"
      : ts.isClassDeclaration(statement)
        ? "class"
        : "other";
    const name = statement.name;
    if (name) mod.topLevel.set(name.text, { kind, node: name, destructured: false });
    if (exported) {
      const key = isDefault ? "default" : name?.text;
      if (key) mod.exports.set(key, { kind: "local", local: name?.text ?? key, node: statement });
    }
  }
}

function readImport(mod: ParsedModule, statement: ts.ImportDeclaration): void {
  if (!ts.isStringLiteral(statement.moduleSpecifier)) return;
  const specifier = statement.moduleSpecifier.text;
  const clause = statement.importClause;
  // Type-only imports are erased: they load nothing and bind no value.
  if (clause?.isTypeOnly) return;
  mod.specifiers.push({ specifier, node: statement.moduleSpecifier });
  if (!clause) return;
  if (clause.name) {
    mod.imports.set(clause.name.text, { specifier, imported: "default", node: clause.name });
  }
  const bindings = clause.namedBindings;
  if (bindings && ts.isNamespaceImport(bindings)) {
    mod.imports.set(bindings.name.text, { specifier, imported: "*", node: bindings });
  } else if (bindings) {
    for (const element of bindings.elements) {
      if (element.isTypeOnly) continue;
      const imported = (element.propertyName ?? element.name).text;
      mod.imports.set(element.name.text, { specifier, imported, node: element });
    }
  }
}

function readExport(mod: ParsedModule, statement: ts.ExportDeclaration): void {
  if (statement.isTypeOnly) return;
  const from =
    statement.moduleSpecifier && ts.isStringLiteral(statement.moduleSpecifier)
      ? statement.moduleSpecifier.text
      : undefined;
  if (from !== undefined)
    mod.specifiers.push({ specifier: from, node: statement.moduleSpecifier! });
  const clause = statement.exportClause;
  if (!clause) {
    if (from !== undefined) mod.exportStars.push({ specifier: from, node: statement });
    return;
  }
  if (ts.isNamespaceExport(clause)) {
    if (from !== undefined) {
      mod.exports.set(clause.name.text, {
        kind: "reexport",
        specifier: from,
        imported: "*",
        node: clause,
      });
    }
    return;
  }
  for (const element of clause.elements) {
    if (element.isTypeOnly) continue;
    const exportedName = element.name.text;
    const sourceName = (element.propertyName ?? element.name).text;
    mod.exports.set(
      exportedName,
      from === undefined
        ? { kind: "local", local: sourceName, node: element }
        : { kind: "reexport", specifier: from, imported: sourceName, node: element },
    );
  }
}

function boundNames(name: ts.BindingName): ts.Identifier[] {
  if (ts.isIdentifier(name)) return [name];
  const names: ts.Identifier[] = [];
  for (const element of name.elements) {
    if (ts.isBindingElement(element)) names.push(...boundNames(element.name));
  }
  return names;
}

/** The SDK functions whose calls the build records, by the name the SDK exports them under. */
const RECORDED = ["defineTool", "useTool", "useModel"] as const;
type Recorded = (typeof RECORDED)[number];

/** Walks the whole module once for dynamic imports, defineTool() and hook calls. */
function findCalls(mod: ParsedModule): void {
  const localNames = new Map<string, Recorded>();
  const agentNamespaces = new Set<string>();
  for (const [local, binding] of mod.imports) {
    if (binding.specifier !== AGENT_PACKAGE) continue;
    if ((RECORDED as readonly string[]).includes(binding.imported)) {
      localNames.set(local, binding.imported as Recorded);
    }
    if (binding.imported === "*") agentNamespaces.add(local);
  }
  const record = (which: Recorded, node: ts.CallExpression) => {
    if (which === "defineTool") mod.toolCalls.push(node);
    else mod.hookCalls[which].push(node);
  };
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node)) {
      const callee = node.expression;
      if (callee.kind === ts.SyntaxKind.ImportKeyword) {
        const arg = node.arguments[0];
        if (arg && ts.isStringLiteralLike(arg))
          mod.specifiers.push({ specifier: arg.text, node: arg });
      } else if (ts.isIdentifier(callee) && localNames.has(callee.text)) {
        record(localNames.get(callee.text)!, node);
      } else if (
        ts.isPropertyAccessExpression(callee) &&
        (RECORDED as readonly string[]).includes(callee.name.text) &&
        ts.isIdentifier(callee.expression) &&
        agentNamespaces.has(callee.expression.text)
      ) {
        record(callee.name.text as Recorded, node);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(mod.source);
}
