import { defineConfig } from 'vitest/config';

// Tests against the real OpenStack lab (../shared/openstack-lab) and the contract tests in
// their lab mode. They share one cloud, so files run one at a time.
export default defineConfig({
  test: {
    include: ['test/lab/**/*.test.ts', 'test/contract/**/*.test.ts'],
    exclude: ['node_modules/**'],
    env: { AICERINE_CONTRACT_TARGET: 'lab' },
    testTimeout: 180_000,
    hookTimeout: 300_000,
    fileParallelism: false,
    // A private etcd on loopback (not the lab's): workers racing through the cluster-wide locks.
    globalSetup: ['test/coordination/etcd-server.ts'],
    reporters: ['default', ['json', { outputFile: '.test-results/lab.json' }]],
    sequence: { concurrent: false },
  },
});
