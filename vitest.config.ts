import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: ['test/lab/**', 'node_modules/**'],
    testTimeout: 30_000,
    // Vitest's default is one worker less than the cores: a single worker on the 2-core machines
    // the suite runs on, each file waiting for the last. Most files spend their time waiting
    // (simulators on a scaled clock, child processes, MariaDB, etcd, Chromium), not computing, so
    // two workers keep both cores busy (three made the campaign simulation time out while files shared the CPU). Every file already runs beside others' servers: ports
    // are the kernel's pick, databases and etcd prefixes are per file.
    maxWorkers: 2,
    // One private MariaDB server and one etcd for every store and coordination test file (each started once per run).
    globalSetup: ['test/store/mariadb-server.ts', 'test/coordination/etcd-server.ts'],
    // The JSON report lets .ci/run print one plain "N passed, N failed" line for both suites.
    reporters: ['default', ['json', { outputFile: '.test-results/unit.json' }]],
  },
});
