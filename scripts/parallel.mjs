// Runs npm scripts at the same time and fails if any of them fails: `node scripts/parallel.mjs
// typecheck lint --live test:unit`. npm test's checks are independent of one another and of the
// tests (the type check emits nothing, the linter skips dist/), tsc is single-threaded, and the
// tests mostly wait on simulators and child processes: run one after the other they leave a core
// idle. Each script's output is printed whole when it ends, so two scripts' lines never
// interleave; the one script after --live writes to the terminal as it goes (the test run's
// progress). The exit code is the first failure's, after all have ended.
import { spawn } from 'node:child_process';

const args = process.argv.slice(2);
const liveAt = args.indexOf('--live');
const live = liveAt >= 0 ? args[liveAt + 1] : undefined;
const names = liveAt >= 0 ? args.filter((_, i) => i !== liveAt) : args;
if (names.length === 0 || (liveAt >= 0 && live === undefined)) {
  process.stderr.write('usage: node scripts/parallel.mjs <npm script>... [--live <npm script>]\n');
  process.exit(2);
}

/** @param {string} name @returns {Promise<number>} */
function runLive(name) {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn('npm', ['run', '--silent', name], { stdio: 'inherit' });
    child.on('error', (err) => process.stderr.write(`${String(err)}\n`));
    child.on('close', (code, signal) => {
      const status = code ?? 1;
      const seconds = ((Date.now() - started) / 1000).toFixed(1);
      const verdict = status === 0 ? 'ok' : `FAILED (${signal ?? `exit ${code}`})`;
      process.stdout.write(`\n> npm run ${name}: ${verdict} in ${seconds} s\n`);
      resolve(status);
    });
  });
}

/** @param {string} name @returns {Promise<number>} */
function run(name) {
  if (name === live) return runLive(name);
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn('npm', ['run', '--silent', name], { stdio: ['ignore', 'pipe', 'pipe'] });
    /** @type {Buffer[]} */
    const out = [];
    child.stdout.on('data', (c) => out.push(c));
    child.stderr.on('data', (c) => out.push(c));
    child.on('error', (err) => {
      out.push(Buffer.from(`${String(err)}\n`));
    });
    child.on('close', (code, signal) => {
      const status = code ?? 1;
      const seconds = ((Date.now() - started) / 1000).toFixed(1);
      const verdict = status === 0 ? 'ok' : `FAILED (${signal ?? `exit ${code}`})`;
      process.stdout.write(`\n> npm run ${name}: ${verdict} in ${seconds} s\n`);
      process.stdout.write(Buffer.concat(out));
      resolve(status);
    });
  });
}

const codes = await Promise.all(names.map(run));
process.exitCode = codes.find((c) => c !== 0) ?? 0;
