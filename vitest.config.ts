import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { defineConfig } from 'vitest/config';

/**
 * Suites of pure functions and in-memory fakes: no server, child process, database, timer or
 * global left behind. They share their worker's module cache instead of a fresh process per file:
 * starting a worker and importing the sources again cost about half a second of CPU per file, a
 * third of a run's CPU for these small files. Every other file (and any new folder) runs isolated.
 */
const SHARED_DIRS = [
  'architecture',
  'checker',
  'config',
  'costs',
  'forecast',
  'formats',
  'fuzz',
  'loop',
  'planner',
  'policy',
  'prevention',
  'snapshot',
  'traces',
];
/** In those folders, but they start a simulator or open MariaDB: isolated. */
const LISTENING = ['test/costs/sim.test.ts', 'test/loop/store-adapter.test.ts', 'test/prevention/writer.test.ts'];
const SHARED = SHARED_DIRS.flatMap((dir) =>
  readdirSync(join(import.meta.dirname, 'test', dir), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.test.ts'))
    .map((f) => `test/${dir}/${f}`),
).filter((f) => !LISTENING.includes(f));

export default defineConfig({
  test: {
    exclude: ['test/lab/**', 'node_modules/**'],
    // Room for a loaded 2-core machine (load average 20 and more while several suites run): a
    // hook starting a simulator took over 10 s there, a fuzz test 36 s. A test that passes takes
    // no longer for it; only a hung one is reported later.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Vitest's default is one worker less than the cores: a single worker on the 2-core machines
    // the suite runs on, each file waiting for the last. Most files spend their time waiting
    // (simulators on a scaled clock, child processes, MariaDB, etcd, Chromium), not computing, so
    // two workers keep both cores busy (three made the campaign simulation time out while files shared the CPU). Every file already runs beside others' servers: ports
    // are the kernel's pick, databases and etcd prefixes are per file.
    maxWorkers: 2,
    // The JSON report lets .ci/run print one plain "N passed, N failed" line for both suites.
    reporters: ['default', ['json', { outputFile: '.test-results/unit.json' }]],
    projects: [
      {
        extends: true,
        test: { name: 'shared', include: SHARED, isolate: false },
      },
      {
        extends: true,
        test: {
          name: 'isolated',
          include: ['test/**/*.test.ts'],
          exclude: ['test/lab/**', 'node_modules/**', ...SHARED],
          // One private MariaDB server and one etcd for every store and coordination test file (each started once per run).
          globalSetup: ['test/store/mariadb-server.ts', 'test/coordination/etcd-server.ts'],
        },
      },
    ],
  },
});
