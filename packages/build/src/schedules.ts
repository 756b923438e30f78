// Schedules are read from source, never run: `agents/<id>/schedules/<name>.ts` must default-export
// `defineSchedule({...})` (imported from @opencomputer/agent) with a literal argument, so the
// deployment records exactly the schedule a person reads, and every problem points at the
// field's line. The cron expression is checked by the same library that schedules it.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import type { ScheduleDeclaration, ScheduleDefinition } from "@opencomputer/agent";
import { scheduleDeclaration, scheduleIssues } from "@opencomputer/agent/internal";
import { cronProblem } from "@opencomputer/schedules";
import ts from "typescript";
import type { BuildError } from "./errors.ts";
import { propertyKey, readJsonLiteral, unwrap } from "./literal.ts";
import { AGENT_PACKAGE, errorAt, type ParsedModule, parseModule } from "./parse.ts";
import type { AgentEntry, Project } from "./project.ts";

const SCHEDULE_FILE = /^([^.]+)\.ts$/;

export interface AgentSchedules {
  byAgent: Map<string, ScheduleDeclaration[]>;
  errors: BuildError[];
}

export function readSchedules(project: Project, agents: readonly AgentEntry[]): AgentSchedules {
  const byAgent = new Map<string, ScheduleDeclaration[]>();
  const errors: BuildError[] = [];
  for (const agent of agents) {
    const dir = join(agent.dir, "schedules");
    const files = listFiles(dir);
    const schedules: ScheduleDeclaration[] = [];
    for (const name of files) {
      const match = SCHEDULE_FILE.exec(name);
      if (!match) continue;
      const file = join(dir, name);
      const rel = file
        .slice(project.root.length + 1)
        .split("\\")
        .join("/");
      const mod = parseModule(file, rel, readFileSync(file, "utf8"));
      const read = readSchedule(mod, match[1]!);
      errors.push(...read.errors);
      if (read.schedule) schedules.push(read.schedule);
    }
    schedules.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    byAgent.set(agent.agentId, schedules);
  }
  return { byAgent, errors };
}

function listFiles(dir: string): string[] {
  try {
    if (!statSync(dir).isDirectory()) return [];
    return readdirSync(dir).sort();
  } catch {
    return [];
  }
}

/** `defineSchedule` as this module binds it: a named import from the agent package. */
function isDefineSchedule(mod: ParsedModule, callee: ts.Expression): boolean {
  if (ts.isIdentifier(callee)) {
    const binding = mod.imports.get(callee.text);
    return binding?.specifier === AGENT_PACKAGE && binding.imported === "defineSchedule";
  }
  if (ts.isPropertyAccessExpression(callee) && ts.isIdentifier(callee.expression)) {
    const binding = mod.imports.get(callee.expression.text);
    return (
      binding?.specifier === AGENT_PACKAGE &&
      binding.imported === "*" &&
      callee.name.text === "defineSchedule"
    );
  }
  return false;
}

function readSchedule(
  mod: ParsedModule,
  fileId: string,
): { schedule?: ScheduleDeclaration; errors: BuildError[] } {
  if (mod.syntaxErrors.length > 0) return { errors: mod.syntaxErrors };
  const exported = mod.exports.get("default");
  const expression =
    exported?.kind === "expression"
      ? unwrap(exported.expression)
      : exported?.kind === "local"
        ? unwrap(mod.topLevel.get(exported.local)?.initializer ?? ts.factory.createNull())
        : undefined;
  if (
    !exported ||
    !expression ||
    !ts.isCallExpression(expression) ||
    !isDefineSchedule(mod, expression.expression)
  ) {
    const at = exported?.node ?? mod.source;
    return {
      errors: [
        errorAt(
          mod,
          at,
          "schedule_not_defined",
          `${mod.rel} must default-export defineSchedule({...}) imported from @opencomputer/agent`,
        ),
      ],
    };
  }
  const arg = expression.arguments[0];
  if (!arg || !ts.isObjectLiteralExpression(unwrap(arg))) {
    return {
      errors: [
        errorAt(
          mod,
          arg ?? expression,
          "schedule_not_literal",
          "defineSchedule() takes an object literal",
        ),
      ],
    };
  }
  const literal = readJsonLiteral(mod, arg, "the schedule");
  if (literal.value === undefined) {
    // The reader's own advice is about tool schemas; a schedule's fix is to spell values out.
    return {
      errors: literal.errors.map((e) => ({
        ...e,
        code: "schedule_not_literal",
        message: `${e.message.split("; ")[0]}; a schedule's fields must be written out as literals`,
      })),
    };
  }
  const object = unwrap(arg) as ts.ObjectLiteralExpression;
  const at = (path: string): ts.Node => {
    const top = path.split(/[.[]/)[0];
    return object.properties.find((p) => p.name && propertyKey(p.name) === top) ?? object;
  };
  const errors = scheduleIssues(literal.value).map((issue) =>
    errorAt(
      mod,
      at(issue.path),
      issue.code,
      `Schedule in ${mod.rel}: ${issue.path} ${issue.message}`,
    ),
  );
  if (errors.length > 0) return { errors };
  const schedule = scheduleDeclaration(literal.value as unknown as ScheduleDefinition);
  if (schedule.id !== fileId) {
    errors.push(
      errorAt(
        mod,
        at("id"),
        "schedule_id_mismatch",
        `id "${schedule.id}" must match the file name "${fileId}"; rename one of them`,
      ),
    );
  }
  const problem = cronProblem(schedule.cron, schedule.timezone);
  if (problem !== null) {
    errors.push(
      errorAt(mod, at("cron"), "schedule_cron_invalid", `cron "${schedule.cron}": ${problem}`),
    );
  }
  return errors.length > 0 ? { errors } : { schedule, errors };
}
