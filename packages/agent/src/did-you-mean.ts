// A misspelt key must fail loudly with the likely intended key, because silently ignoring
// e.g. `descripton` would ship a tool without the field the author wrote.

/** Names other tool SDKs use for our keys; edit distance alone would not find these. */
const ALIASES: Record<string, string> = {
  parameters: "input",
  inputschema: "input",
  input_schema: "input",
  schema: "input",
  outputschema: "output",
  output_schema: "output",
  execute: "run",
  handler: "run",
};

export function suggestKey(key: string, allowed: readonly string[]): string | undefined {
  const lower = key.toLowerCase();
  const alias = ALIASES[lower];
  if (alias !== undefined && allowed.includes(alias)) return alias;
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of allowed) {
    const distance = editDistance(lower, candidate.toLowerCase());
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  // Allow roughly one typo per three characters, so short keys need a close match.
  const limit = Math.max(1, Math.floor((best?.length ?? 0) / 3));
  return bestDistance <= limit ? best : undefined;
}

/** Levenshtein distance with adjacent transpositions counted as one edit. */
function editDistance(a: string, b: string): number {
  const rows: number[][] = [];
  for (let i = 0; i <= a.length; i++) {
    const row: number[] = [i];
    for (let j = 1; j <= b.length; j++) {
      if (i === 0) {
        row.push(j);
        continue;
      }
      const above = rows[i - 1]!;
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(above[j]! + 1, row[j - 1]! + 1, above[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        d = Math.min(d, rows[i - 2]![j - 2]! + 1);
      }
      row.push(d);
    }
    rows.push(row);
  }
  return rows[a.length]![b.length]!;
}
