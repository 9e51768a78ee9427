import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

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
/**
 * Files of other folders that qualify too: fakes and simulators in process (closed by the file),
 * temporary SQLite files, no MariaDB, etcd, child process, environment variable, process.exit or
 * spy on a shared module. A fresh worker cost each about 0.8 s of CPU, most of what the small
 * ones use. Not here: the executor and contract simulations that bound virtual-time gaps or count
 * polls (failures.sim, follow.sim, ...): under load 20-26 two of them failed in a shared worker
 * (failures.sim 3 times in 4, a backoff gap of 30.5-35 s against < 30) and passed isolated.
 */
const SHARED_FILES = [
  'test/api/api.test.ts',
  'test/api/endpoints.test.ts',
  'test/api/forecast.test.ts',
  'test/api/guard.test.ts',
  'test/api/hostile.test.ts',
  'test/api/logs.test.ts',
  'test/api/metrics.test.ts',
  'test/api/names.test.ts',
  'test/api/web.test.ts',
  'test/cli/command-list.test.ts',
  'test/cli/commands/costs.test.ts',
  'test/cli/commands/demo.test.ts',
  'test/cli/commands/snapshot.test.ts',
  'test/cli/format-plan.test.ts',
  'test/cli/numbers.test.ts',
  'test/cloud/actuator-types.test.ts',
  'test/cloud/auth/clouds-yaml.test.ts',
  'test/cloud/auth/keystone.test.ts',
  'test/cloud/check.test.ts',
  'test/cloud/credential-check.test.ts',
  'test/cloud/credentials.test.ts',
  'test/cloud/http/service-client.test.ts',
  'test/cloud/http/transport.test.ts',
  'test/cloud/log.test.ts',
  'test/cloud/openstack/nova.test.ts',
  'test/cloud/openstack/placement.test.ts',
  'test/cloud/prometheus/loads.test.ts',
  'test/cloud/ratio-probe.test.ts',
  'test/cloud/record-state.test.ts',
  'test/cloud/record.test.ts',
  'test/coordination/local-locks.test.ts',
  'test/coordination/rendezvous.test.ts',
  'test/executor/attempt.test.ts',
  'test/executor/awkward-nova.sim.test.ts',
  'test/executor/memory-journal.test.ts',
  'test/executor/shared-reads.test.ts',
  'test/executor/store-journal.test.ts',
  'test/executor/store-sinks.sim.test.ts',
  'test/executor/takeover.sim.test.ts',
  'test/executor/wave-gain.sim.test.ts',
  'test/maintenance/api.sim.test.ts',
  'test/maintenance/handover.test.ts',
  'test/maintenance/trial.test.ts',
  'test/maintenance/wakeups.test.ts',
  'test/notifications/events.test.ts',
  'test/notifications/listener.test.ts',
  'test/service/cloud-reader.test.ts',
  'test/service/loop-settings.test.ts',
  'test/service/snapshot-record.sim.test.ts',
  'test/service/wave-check.test.ts',
  'test/sim/clock.test.ts',
  'test/sim/cold-migrations.test.ts',
  'test/sim/export.test.ts',
  'test/sim/faults.test.ts',
  'test/sim/http/cinder.test.ts',
  'test/sim/http/control.test.ts',
  'test/sim/http/server.test.ts',
  'test/sim/load.test.ts',
  'test/sim/migrations.test.ts',
  'test/sim/promql.test.ts',
  'test/sim/server-lifecycle.test.ts',
  'test/sim/setup.test.ts',
  'test/tasks/destinations.test.ts',
  'test/tasks/purge.sim.test.ts',
  'test/tasks/registry.test.ts',
  'test/validation/ssh.test.ts',
];
/** In those folders, but they start a simulator or open MariaDB: isolated. */
const LISTENING = ['test/costs/sim.test.ts', 'test/loop/store-adapter.test.ts', 'test/prevention/writer.test.ts'];
const SHARED = [
  ...SHARED_DIRS.flatMap((dir) =>
    readdirSync(join(import.meta.dirname, 'test', dir), { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.test.ts'))
      .map((f) => `test/${dir}/${f}`),
  ),
  ...SHARED_FILES,
].filter(
  (f) =>
    !LISTENING.includes(f) &&
    // A module mock applies only to imports made after it: with a module cache shared between
    // files, another file may have loaded the real module first, and the mock would miss.
    !readFileSync(join(import.meta.dirname, f), 'utf8').includes('vi.mock('),
);

/**
 * The slowest files of a full run on the 2-core machine (2026-12-03), slowest first. Vitest starts
 * the longest files first from its results cache (node_modules/.vite/vitest), so the run does not
 * end on one worker with a long file left; a fresh clone (CI) has no cache, and vitest would order
 * by file size, which puts a 40 s file after many 1 s ones. This list stands in for the cache
 * until it has every file; a file missing here only goes after those listed.
 */
const SLOWEST = [
  'test/coordination/replicas.test.ts',
  'test/executor/kill9.test.ts',
  'test/contract/awkward.test.ts',
  'test/maintenance/campaign.sim.test.ts',
  'test/service/plan-status.sim.test.ts',
  'test/maintenance/kill9.test.ts',
  'test/web/tasks.test.ts',
  'test/service/demo.test.ts',
  'test/coordination/etcd-locks.test.ts',
  'test/service/replicas.sim.test.ts',
  'test/executor/reconcile.sim.test.ts',
  'test/web/dashboard.test.ts',
  'test/tasks/evacuate.sim.test.ts',
  'test/sim/openstack-cli.test.ts',
  'test/service/faults.sim.test.ts',
  'test/service/tasks-api.sim.test.ts',
  'test/contract/clients.test.ts',
  'test/validation/validate-compute.test.ts',
  'test/web/plans.test.ts',
  'test/web/maintenance.test.ts',
];

/**
 * Workers of the isolated project, on a 2-core machine: its files mostly wait, so three of them
 * beside the shared process's one keep both cores busy (npm test 4 min 39 s and 4 min 51 s at
 * 147-153% of one core, against 6 min 24 s at 131% with two; docs/benchmarks.md). Note that
 * `--maxWorkers` on the command line does not reach a project that sets its own.
 */
const ISOLATED_WORKERS = 3;

class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const root = this.ctx.config.root;
    const key = (f: TestSpecification) => `${f.project.name}:${relative(root, f.moduleId)}`;
    if (sorted.every((f) => this.ctx.cache.getFileTestResults(key(f)) !== undefined)) return sorted;
    // Projects stay in vitest's order (they run one after the other); within one, listed files first.
    const project = new Map<string, number>();
    for (const f of sorted) if (!project.has(f.project.name)) project.set(f.project.name, project.size);
    const rank = (f: TestSpecification) => {
      const i = SLOWEST.indexOf(relative(root, f.moduleId));
      return i < 0 ? SLOWEST.length : i;
    };
    return sorted
      .map((f, i) => ({ f, i }))
      .sort(
        (a, b) =>
          project.get(a.f.project.name)! - project.get(b.f.project.name)! || rank(a.f) - rank(b.f) || a.i - b.i,
      )
      .map(({ f }) => f);
  }
}

export default defineConfig({
  test: {
    exclude: ['test/lab/**', 'node_modules/**'],
    // Room for a loaded 2-core machine (load average 20 and more while several suites run): a
    // hook starting a simulator took over 10 s there, a fuzz test 36 s. A test that passes takes
    // no longer for it; only a hung one is reported later.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    sequence: { sequencer: LongestFirst },
    // The JSON report lets .ci/run print one plain "N passed, N failed" line for both suites.
    // npm test's shared process names its own (--outputFile.json, package.json).
    reporters: ['default', 'json'],
    outputFile: { json: '.test-results/unit.json' },
    projects: [
      {
        extends: true,
        // One worker, one module cache for all these files: they compute (fuzzing, mutations, the
        // planner's properties) where the isolated files wait. `npm test` runs the two projects
        // as two vitest processes side by side (scripts/parallel.mjs), so this core-bound worker
        // fills the CPU the isolated files leave idle; `vitest run` alone runs this group first.
        test: {
          name: 'shared',
          include: SHARED,
          isolate: false,
          maxWorkers: 1,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: 'isolated',
          include: ['test/**/*.test.ts'],
          exclude: ['test/lab/**', 'node_modules/**', ...SHARED],
          // One private MariaDB server and one etcd for every store and coordination test file (each started once per run).
          globalSetup: ['test/store/mariadb-server.ts', 'test/coordination/etcd-server.ts'],
          // Most of these files wait (simulators on a scaled clock, child processes, MariaDB, etcd,
          // Chromium) rather than compute; every file already runs beside others' servers: ports
          // are the kernel's pick, databases and etcd prefixes are per file.
          maxWorkers: ISOLATED_WORKERS,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
