// Reads a V8 .cpuprofile (from `node --cpu-prof`, e.g. BENCH_PROFILE=<dir> npm run bench) and prints where the
// time went: top functions by self time, and by total time grouped by package or project file.
// Usage: npx tsx bench/cpuprofile.ts <file.cpuprofile> [top=25]
import fs from 'node:fs';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

const [file, topArg] = process.argv.slice(2);
if (!file) {
  process.stderr.write('usage: tsx bench/cpuprofile.ts <file.cpuprofile> [top]\n');
  process.exit(2);
}
const top = Number(topArg ?? 25);
const profile = JSON.parse(fs.readFileSync(file, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

// Self time per node: each sample's delta is charged to the node that was on top of the stack.
const self = new Map<number, number>();
profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
// Percentages are of the time the thread was busy: (idle) and (program) samples are left out of the total.
const idle = new Set(
  profile.nodes.filter((n) => ['(idle)', '(program)'].includes(n.callFrame.functionName)).map((n) => n.id),
);
for (const id of idle) self.delete(id);
const total = [...self.values()].reduce((a, b) => a + b, 0);

/** A package name (node_modules/<pkg>), a project path (src/...), node internals, or a V8 pseudo-frame. */
function area(url: string, name: string): string {
  if (!url) return `(${name || 'anonymous'})`;
  const nm = url.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const rest = url.slice(nm + 'node_modules/'.length).split('/');
    return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  if (url.startsWith('node:')) return url;
  const src = url.indexOf('/dist/');
  return src >= 0 ? url.slice(src + 1) : url.replace(/^file:\/\//, '');
}

const pct = (us: number) => `${((us / total) * 100).toFixed(1).padStart(5)}%`;
const label = (n: Node) =>
  `${n.callFrame.functionName || '(anonymous)'} ${area(n.callFrame.url, n.callFrame.functionName)}:${n.callFrame.lineNumber + 1}`;

const selfByFrame = new Map<string, number>();
for (const [id, us] of self) {
  const key = label(byId.get(id)!);
  selfByFrame.set(key, (selfByFrame.get(key) ?? 0) + us);
}
process.stdout.write(`${file}: ${(total / 1e6).toFixed(2)} s busy\n\nTop ${top} functions by self time:\n`);
for (const [key, us] of [...selfByFrame].sort((a, b) => b[1] - a[1]).slice(0, top))
  process.stdout.write(`${pct(us)}  ${key}\n`);

// Inclusive time per area: a sample counts once for every distinct area on its stack.
const inclusive = new Map<string, number>();
for (const [id, us] of self) {
  const seen = new Set<string>();
  for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
    const n = byId.get(cur)!;
    seen.add(area(n.callFrame.url, n.callFrame.functionName));
  }
  for (const a of seen) inclusive.set(a, (inclusive.get(a) ?? 0) + us);
}
process.stdout.write(`\nTop ${top} areas by total time (a sample counts for every area on its stack):\n`);
for (const [key, us] of [...inclusive].sort((a, b) => b[1] - a[1]).slice(0, top))
  process.stdout.write(`${pct(us)}  ${key}\n`);
