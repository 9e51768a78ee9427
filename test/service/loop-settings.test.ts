// Per-aggregate executor settings: an aggregate's own `concurrency`, `retry` and `onPause` are
// what its executions run under (they were read from `defaults` only), while the pool's global
// limit and host overrides hold across aggregates.
import { describe, expect, it } from 'vitest';
import { parseServiceConfig } from '../../src/config/load.js';
import { resolveExecutorSettings } from '../../src/executor/settings.js';
import { MigrationSlots } from '../../src/executor/slots.js';
import { executorSettings, executorSettingsFor } from '../../src/service/loop-settings.js';

async function config() {
  const { config } = await parseServiceConfig(
    {
      openstack: { reader: { cloud: 'unused' }, actuator: { cloud: 'unused' } },
      store: { url: 'sqlite:aicerine.db' },
      concurrency: { global: 5 },
      defaults: { onPause: 'finish', retry: { attempts: 3, backoffBase: '10m', backoffMax: '6h' } },
      aggregates: {
        gold: {
          onPause: 'abort',
          retry: { attempts: 1, backoffBase: '1m', backoffMax: '2m' },
          concurrency: { perSourceHost: 2, perDestinationHost: 1, perAggregate: 2 },
        },
      },
    },
    { baseDir: '/tmp' },
  );
  return config;
}

describe('per-aggregate executor settings', () => {
  it('an aggregate runs with its own retry and onPause; the others with the defaults', async () => {
    const c = await config();
    const gold = resolveExecutorSettings(executorSettingsFor(c, 'gold'));
    expect(gold.onStop).toBe('abort');
    expect(gold.retry).toEqual({ attempts: 1, backoffBaseSeconds: 60, backoffMaxSeconds: 120 });
    const other = resolveExecutorSettings(executorSettingsFor(c, 'silver'));
    expect(other.onStop).toBe('finish');
    expect(other.retry).toEqual({ attempts: 3, backoffBaseSeconds: 600, backoffMaxSeconds: 21_600 });
  });

  it("an aggregate's moves take slots under its own concurrency; the global limit binds them all", async () => {
    const c = await config();
    const pool = resolveExecutorSettings(executorSettings(c)).limits;
    const slots = new MigrationSlots(pool);
    // gold: 2 per source host (the default is 1), 1 per destination, 2 in the aggregate.
    expect(slots.tryAcquire({ source: 'g1', dest: 'g2', aggregate: 'gold' })).not.toBeNull();
    expect(slots.blockedBy({ source: 'g1', dest: 'g2', aggregate: 'gold' })).toBe('destination g2 limit 1');
    expect(slots.tryAcquire({ source: 'g1', dest: 'g3', aggregate: 'gold' })).not.toBeNull();
    expect(slots.blockedBy({ source: 'g4', dest: 'g5', aggregate: 'gold' })).toBe('aggregate gold limit 2');
    // silver: the defaults (1 per source host).
    expect(slots.tryAcquire({ source: 's1', dest: 's2', aggregate: 'silver' })).not.toBeNull();
    expect(slots.blockedBy({ source: 's1', dest: 's3', aggregate: 'silver' })).toBe('source s1 limit 1');
    expect(slots.tryAcquire({ source: 's4', dest: 's5', aggregate: 'silver' })).not.toBeNull();
    expect(slots.tryAcquire({ source: 's6', dest: 's7', aggregate: 'silver' })).not.toBeNull();
    expect(slots.blockedBy({ source: 's8', dest: 's9', aggregate: 'silver' })).toBe('global limit 5');
  });
});

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
