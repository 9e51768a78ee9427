// Start-up cost of the `aicerine` command, as whole processes: `aicerine --help` and a plan of
// examples/small-cluster.json (24 hosts, 600 servers). Prints the median wall time and the median
// peak RSS over several runs of each. Run after `npm run build` (npm run bench does both).
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..');
const cli = join(root, 'bin', 'aicerine.js');
const RUNS = Number(process.env.STARTUP_RUNS ?? 9);

// Reports the process's own peak RSS on exit, on stderr, so the measurement needs no extra tool.
const reportRss =
  'data:text/javascript,process.on("exit",()=>process.stderr.write("\\nmaxrss-kb "+process.resourceUsage().maxRSS+"\\n"))';

const cases = [
  { name: 'aicerine --help', args: ['--help'] },
  {
    name: 'aicerine plan --snapshot examples/small-cluster.json',
    args: ['plan', '--snapshot', 'examples/small-cluster.json'],
  },
];

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
};

console.log(`Start-up, ${RUNS} runs each (median), Node ${process.version}`);
console.log('command | median ms | median peak RSS MiB');
for (const c of cases) {
  const ms = [];
  const rss = [];
  for (let i = 0; i < RUNS; i++) {
    const started = process.hrtime.bigint();
    const r = spawnSync(process.execPath, ['--import', reportRss, cli, ...c.args], {
      cwd: root,
      encoding: 'utf8',
    });
    ms.push(Number(process.hrtime.bigint() - started) / 1e6);
    if (r.status !== 0) throw new Error(`${c.name} exited ${r.status}: ${r.stderr}`);
    const kb = /maxrss-kb (\d+)/.exec(r.stderr)?.[1];
    rss.push(Number(kb) / 1024);
  }
  console.log(`${c.name} | ${median(ms).toFixed(0)} | ${median(rss).toFixed(0)}`);
}
