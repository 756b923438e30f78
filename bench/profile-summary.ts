// Summarises a V8 .cpuprofile (from `node --cpu-prof`): the functions with the most self time,
// the same rolled up by file or package, and the engine's functions by inclusive time.
//
//   node --cpu-prof --cpu-prof-dir=/tmp/prof --import tsx bench/run.ts --only engine
//   node --import tsx bench/profile-summary.ts /tmp/prof/<the larger file>.cpuprofile [top]
//
// Keep profiles out of the repository: they are large and machine-specific.
import { readFileSync } from "node:fs";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const [file, topArg] = process.argv.slice(2);
if (!file) {
  console.error("usage: node --import tsx bench/profile-summary.ts <file.cpuprofile> [top]");
  process.exit(2);
}
const top = Number(topArg ?? 25);
const profile = JSON.parse(readFileSync(file, "utf8")) as CpuProfile;

const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
const parents = new Map<number, number>();
for (const n of profile.nodes) for (const child of n.children ?? []) parents.set(child, n.id);

const root = new URL("..", import.meta.url).href;
const where = (url: string) =>
  url.startsWith(root) ? url.slice(root.length) : url.replace(/.*\/node_modules\//, "npm:");
// Frames without a URL are native (better-sqlite3's `run`/`get`/`all`, fs calls) or V8's own.
const label = (n: ProfileNode) =>
  `${n.callFrame.functionName || "(anonymous)"} ${where(n.callFrame.url) || "(native)"}`;
const unit = (n: ProfileNode) => {
  const url = where(n.callFrame.url);
  if (url.startsWith("npm:"))
    return url
      .split("/")
      .slice(0, url.startsWith("npm:@") ? 2 : 1)
      .join("/");
  return url || `${n.callFrame.functionName} (native)`;
};

const self = new Map<string, number>();
const byUnit = new Map<string, number>();
const inclusive = new Map<string, number>();
let total = 0;
profile.samples.forEach((id, i) => {
  const dt = profile.timeDeltas[i] ?? 0;
  total += dt;
  const leaf = nodes.get(id)!;
  self.set(label(leaf), (self.get(label(leaf)) ?? 0) + dt);
  byUnit.set(unit(leaf), (byUnit.get(unit(leaf)) ?? 0) + dt);
  const seen = new Set<string>();
  for (let at: number | undefined = id; at !== undefined; at = parents.get(at)) {
    const key = label(nodes.get(at)!);
    if (seen.has(key)) continue;
    seen.add(key);
    inclusive.set(key, (inclusive.get(key) ?? 0) + dt);
  }
});

function print(
  title: string,
  entries: Map<string, number>,
  keep: (key: string) => boolean = () => true,
) {
  console.log(`\n${title}`);
  const rows = [...entries].filter(([k]) => keep(k)).sort((a, b) => b[1] - a[1]);
  for (const [key, us] of rows.slice(0, top)) {
    const pct = ((100 * us) / total).toFixed(1).padStart(5);
    console.log(`${(us / 1000).toFixed(1).padStart(9)} ms ${pct} %  ${key}`);
  }
}

console.log(`${file}: ${(total / 1000).toFixed(0)} ms sampled`);
print("self time by function", self);
print("self time by file or package", byUnit);
print("inclusive time, engine and store", inclusive, (k) => k.includes("packages/"));
