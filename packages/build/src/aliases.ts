// Which deployment each alias of an agent names, and how it got there. Every move is one JSON
// line appended to `<agentId>.aliases.jsonl` in the deployments directory: appends from a build,
// a dev rebuild and an upload racing each other never overwrite one another, and the file is the
// history the API and the console show. The current value of an alias is its last line.
//
// The rule (docs/build.md): the first deployment of an agent sets both aliases, so a new project
// answers `agent@production` at once; after that a build or a deploy moves `development` unless
// it names `production`, and only an explicit deploy or a rollback moves `production`.

import { appendFileSync, existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { OpenComputerError } from "@opencomputer/agent";

export const ALIASES = ["development", "production"] as const;
export type Alias = (typeof ALIASES)[number];

export type AliasReason = "build" | "deploy" | "rollback";

export interface AliasMove {
  alias: Alias;
  deploymentId: string;
  /** What the alias named before this move (null for its first). */
  previous: string | null;
  at: string;
  reason: AliasReason;
}

export interface AgentAliases {
  development: string | null;
  production: string | null;
  /** Oldest first. */
  history: AliasMove[];
}

export function isAlias(value: unknown): value is Alias {
  return value === "development" || value === "production";
}

/** The agents with an alias file (or a pre-alias `.current` file), by id. */
export function aliasedAgents(entries: readonly string[]): string[] {
  const ids = new Set<string>();
  for (const name of entries) {
    if (name.endsWith(".aliases.jsonl")) ids.add(name.slice(0, -".aliases.jsonl".length));
    else if (name.endsWith(".current")) ids.add(name.slice(0, -".current".length));
  }
  return [...ids].sort();
}

export function readAliases(dir: string, agentId: string): AgentAliases {
  const aliases: AgentAliases = { development: null, production: null, history: [] };
  const file = aliasFile(dir, agentId);
  if (existsSync(file)) {
    for (const line of readFileSync(file, "utf8").split("\n")) {
      const move = parseMove(line);
      if (!move) continue;
      aliases.history.push(move);
      aliases[move.alias] = move.deploymentId;
    }
    return aliases;
  }
  // A project built before aliases existed: its one pointer named the latest build for both.
  const legacy = legacyCurrent(dir, agentId);
  if (legacy) {
    aliases.development = legacy;
    aliases.production = legacy;
  }
  return aliases;
}

/** Points `alias` at `deploymentId`; null when it already names it (nothing is written). */
export function moveAlias(
  dir: string,
  agentId: string,
  alias: Alias,
  deploymentId: string,
  reason: AliasReason,
  now: Date,
): AliasMove | null {
  const current = readAliases(dir, agentId);
  if (current[alias] === deploymentId) return null;
  const move: AliasMove = {
    alias,
    deploymentId,
    previous: current[alias],
    at: now.toISOString(),
    reason,
  };
  append(dir, agentId, current, [move]);
  return move;
}

/**
 * Records a new build or deploy of the agent: both aliases when the agent has none yet, else
 * the one named. Returns the moves made.
 */
export function recordDeployment(
  dir: string,
  agentId: string,
  alias: Alias,
  deploymentId: string,
  reason: "build" | "deploy",
  now: Date,
): AliasMove[] {
  const current = readAliases(dir, agentId);
  const targets: Alias[] =
    current.development === null && current.production === null ? [...ALIASES] : [alias];
  const moves = targets
    .filter((target) => current[target] !== deploymentId)
    .map((target) => ({
      alias: target,
      deploymentId,
      previous: current[target],
      at: now.toISOString(),
      reason,
    }));
  if (moves.length > 0) append(dir, agentId, current, moves);
  return moves;
}

/**
 * Where a rollback of `alias` goes without an explicit target: what the alias named before its
 * latest move. Rolling back twice therefore returns to where it started (an undo, not a walk
 * down the history); `--to` names any earlier deployment.
 */
export function rollbackTarget(aliases: AgentAliases, alias: Alias): string {
  const last = aliases.history.filter((m) => m.alias === alias).at(-1);
  if (!last?.previous) {
    throw new OpenComputerError(
      "rollback_unavailable",
      `The ${alias} alias has no earlier deployment to go back to; name one with --to <deploymentId> (see GET /deployments)`,
      { path: "to" },
    );
  }
  return last.previous;
}

function append(dir: string, agentId: string, current: AgentAliases, moves: AliasMove[]): void {
  const file = aliasFile(dir, agentId);
  const lines: string[] = [];
  // The first write for a pre-alias project keeps its pointer as the start of the history.
  if (!existsSync(file)) {
    const legacy = legacyCurrent(dir, agentId);
    if (legacy && current.history.length === 0) {
      for (const alias of ALIASES) {
        lines.push(
          JSON.stringify({ alias, deploymentId: legacy, previous: null, at: "", reason: "build" }),
        );
      }
    }
  }
  for (const move of moves) lines.push(JSON.stringify(move));
  // One write per call: O_APPEND places it whole after whatever another writer appended. The
  // leading newline ends a line a crash may have cut short, so it cannot swallow this move.
  appendFileSync(file, `\n${lines.join("\n")}\n`, { mode: 0o644 });
}

function parseMove(line: string): AliasMove | null {
  if (line.trim() === "") return null;
  try {
    const value = JSON.parse(line) as Partial<AliasMove>;
    if (!isAlias(value.alias) || typeof value.deploymentId !== "string") return null;
    return {
      alias: value.alias,
      deploymentId: value.deploymentId,
      previous: typeof value.previous === "string" ? value.previous : null,
      at: typeof value.at === "string" ? value.at : "",
      reason:
        value.reason === "deploy" || value.reason === "rollback"
          ? value.reason
          : ("build" as const),
    };
  } catch {
    // A line cut short by a crash mid-append: the move it began never happened.
    return null;
  }
}

function aliasFile(dir: string, agentId: string): string {
  return join(dir, `${agentId}.aliases.jsonl`);
}

function legacyCurrent(dir: string, agentId: string): string | null {
  const file = join(dir, `${agentId}.current`);
  if (!existsSync(file)) return null;
  const id = readFileSync(file, "utf8").trim();
  return id === "" ? null : id;
}
