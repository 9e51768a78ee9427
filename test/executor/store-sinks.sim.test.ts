// The executor writing to the store: its journal, quarantine, cost samples, cooldowns and audit
// log, on SQLite, after a plan where one server cannot be moved.
import { afterEach, describe, expect, it } from 'vitest';
import { Executor, MigrationSlots, resolveExecutorSettings, storeSinks } from '../../src/executor/index.js';
import { openStore, type Store } from '../../src/store/index.js';
import { host, move, noStop, openWorld, server, serverId, snapshot, type World } from './sim-world.js';

let world: World | undefined;
let store: Store | undefined;
afterEach(async () => {
  await world?.close();
  await store?.close();
  world = undefined;
  store = undefined;
});

describe('the executor on the store', () => {
  it('records quarantine, cost samples, cooldowns and the audit log', async () => {
    world = await openWorld(snapshot([host('c1'), host('c2')], [server(1, 'c1'), server(2, 'c1')]), {
      speed: 40,
    });
    world.cloud.failServers.add(serverId(2));
    store = await openStore({ kind: 'sqlite', path: ':memory:' });
    const settings = resolveExecutorSettings({
      retry: { attempts: 2, backoffBaseSeconds: 5 },
      settleSeconds: 2,
    });
    const executor = new Executor({
      journal: store,
      cloud: world.executorCloud,
      clock: world.clock,
      settings,
      slots: new MigrationSlots(settings.limits),
      timeoutFor: () => 600,
      ...storeSinks(store),
    });
    const summary = await executor.start(
      {
        aggregate: 'agg',
        planId: null,
        startedBy: 'loop:active',
        moves: [move(1, 1, 1, 'c1', 'c2'), move(2, 2, 2, 'c1', 'c2')],
      },
      { deadline: null, shouldStop: noStop },
    );
    expect(summary.moves.map((m) => m.state)).toEqual(['completed', 'failed']);
    expect((await store.getExecution(summary.executionId))?.state).toBe('finished');
    const q = await store.quarantine.active(serverId(2));
    expect(q).toMatchObject({ aggregate: 'agg', attempts: 2, novaFault: expect.stringMatching(/failed/) });
    expect(await store.quarantine.active(serverId(1))).toBeNull();
    const samples = (await store.costSamples.list()).items;
    expect(samples).toEqual([
      expect.objectContaining({ serverId: serverId(1), ramMB: 4096, outcome: 'completed', source: 'own' }),
    ]);
    expect(await store.cooldowns.getServer(serverId(1))).toMatchObject({
      from: 'c1',
      to: 'c2',
      aggregate: 'agg',
    });
    expect(await store.cooldowns.getServer(serverId(2))).toBeNull();
    const audit = (await store.audit.list({}, { limit: 200 })).items;
    const actions = new Set(audit.map((a) => a.action));
    for (const a of [
      'execution-started',
      'live-migrate',
      'migration-found',
      'move-completed',
      'retry-scheduled',
      'quarantined',
      'execution-ended',
    ]) {
      expect(actions).toContain(`executor.${a}`);
    }
    expect(audit.every((a) => a.actor === 'loop:active')).toBe(true);
  });
});
