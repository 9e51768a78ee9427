// The executor's settings from the configuration: one pool with the defaults' limits, and each
// configured aggregate's own concurrency limits carried into it (they held for nothing before:
// every aggregate ran under the defaults).
import { describe, expect, it } from 'vitest';
import { parseServiceConfig } from '../../src/config/load.js';
import { resolveExecutorSettings } from '../../src/executor/settings.js';
import { executorSettings } from '../../src/service/loop-settings.js';

describe('executorSettings', () => {
  it("carries each configured aggregate's concurrency into the one slot pool", async () => {
    const { config } = await parseServiceConfig(
      {
        openstack: { reader: { cloud: 'r' } },
        store: { url: 'sqlite:aicerine.db' },
        defaults: { concurrency: { perAggregate: 6 } },
        aggregates: { gold: { concurrency: { perAggregate: 2, perDestinationHost: 1 } }, silver: {} },
      },
      { baseDir: '/tmp' },
    );
    const limits = resolveExecutorSettings(executorSettings(config)).limits;
    expect(limits.perAggregate).toBe(6);
    expect(limits.byAggregate?.gold).toMatchObject({ perAggregate: 2, perDestinationHost: 1 });
    expect(limits.byAggregate?.silver).toMatchObject({ perAggregate: 6 });
  });
});
