import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: ['test/lab/**', 'node_modules/**'],
    testTimeout: 30_000,
    // One private MariaDB server and one etcd for every store and coordination test file (each started once per run).
    globalSetup: ['test/store/mariadb-server.ts', 'test/coordination/etcd-server.ts'],
    // The JSON report lets .ci/run print one plain "N passed, N failed" line for both suites.
    reporters: ['default', ['json', { outputFile: '.test-results/unit.json' }]],
  },
});
