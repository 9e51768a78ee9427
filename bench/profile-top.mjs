// Where a CPU profile's time went, as text: the functions with the most self time and the most
// inclusive time (a function counted once per sample however deep it recurses), with the share
// of samples that were idle (the process waiting: on the network, the store, a timer).
//   node bench/profile-top.mjs FILE.cpuprofile [--top N]
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';

const argv = process.argv.slice(2);
const file = argv.find((a) => !a.startsWith('--'));
if (file === undefined) {
  console.error('usage: node bench/profile-top.mjs FILE.cpuprofile [--top N]');
  process.exit(2);
}
const topAt = argv.indexOf('--top');
const top = topAt >= 0 ? Number(argv[topAt + 1]) : 25;
const profile = JSON.parse(readFileSync(file, 'utf8'));

const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const label = (n) => {
  const f = n.callFrame;
  const url = f.url.startsWith('file://') ? relative(process.cwd(), new URL(f.url).pathname) : f.url;
  return `${f.functionName || '(anonymous)'} ${url ? `${url}:${f.lineNumber + 1}` : ''}`.trim();
};

// Each sample's duration is the gap to the next one (timeDeltas are in microseconds).
const deltas = profile.timeDeltas;
const self = new Map();
const inclusive = new Map();
let total = 0;
let idle = 0;
for (let i = 0; i < profile.samples.length; i++) {
  const us = deltas[i + 1] ?? 0;
  total += us;
  const leaf = byId.get(profile.samples[i]);
  const name = label(leaf);
  if (leaf.callFrame.functionName === '(idle)') idle += us;
  self.set(name, (self.get(name) ?? 0) + us);
  const seen = new Set();
  for (let id = profile.samples[i]; id !== undefined; id = parent.get(id)) {
    const l = label(byId.get(id));
    if (seen.has(l)) continue;
    seen.add(l);
    inclusive.set(l, (inclusive.get(l) ?? 0) + us);
  }
}
const ms = (us) => `${(us / 1000).toFixed(0).padStart(7)} ms`;
console.log(`${file}: ${ms(total)} sampled, ${ms(idle)} idle (${((100 * idle) / total).toFixed(0)}%)`);
for (const [title, m] of [
  ['self', self],
  ['inclusive', inclusive],
]) {
  console.log(`\n${title}:`);
  for (const [name, us] of [...m].sort((a, b) => b[1] - a[1]).slice(0, top))
    console.log(`${ms(us)}  ${((100 * us) / total).toFixed(1).padStart(5)}%  ${name}`);
}
