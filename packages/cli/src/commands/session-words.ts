// `opencomputer session <words>` is either a subcommand (`attach ses_…`) or a message to send.
// A mistyped subcommand must not become a message the model answers, so words that look like
// one are refused unless the message is quoted (one argument) or follows `--`.

import { OpenComputerError } from "@opencomputer/agent";
import { SUBCOMMANDS } from "./remote/session.ts";

/** Throws a usage error when the positionals look like a subcommand rather than a message. */
export function refuseLikelySubcommand(argv: readonly string[], positionals: readonly string[]) {
  if (argv.includes("--") || positionals.length === 0) return;
  const first = positionals[0]!;
  if (!/^[a-z][a-z-]*$/.test(first)) return;
  const near = [...SUBCOMMANDS].find((sub) => distance(sub, first) <= 2);
  // Several bare words are a command line more often than a message; a lone word is a message
  // unless it is a near miss of a subcommand.
  if (positionals.length === 1 && !near) return;
  const hint = near ? ` Did you mean \`opencomputer session ${near} …\`?` : "";
  throw new OpenComputerError(
    "usage",
    `"${first}" is not a session subcommand (${[...SUBCOMMANDS].join(", ")}).${hint} To send it as a message, quote it: opencomputer session "${positionals.join(" ")}" (or put -- before it)`,
  );
}

/** Levenshtein distance, for short words. */
function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let diagonal = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const above = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, diagonal + (a[i - 1] === b[j - 1] ? 0 : 1));
      diagonal = above;
    }
  }
  return row[b.length]!;
}
