// Runs npm scripts at the same time and fails if any of them fails: `node scripts/parallel.mjs
// build typecheck lint`. npm test's checks before the tests are independent of one another (the
// type check emits nothing, the linter skips dist/), and tsc is single-threaded: run one after
// the other they leave a core idle. Each script's output is printed whole when it ends, so two
// scripts' lines never interleave; the exit code is the first failure's, after all have ended.
import { spawn } from 'node:child_process';

const names = process.argv.slice(2);
if (names.length === 0) {
  process.stderr.write('usage: node scripts/parallel.mjs <npm script> [<npm script>...]\n');
  process.exit(2);
}

/** @param {string} name @returns {Promise<number>} */
function run(name) {
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
