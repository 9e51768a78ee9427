// The executor on the contract world: the simulator in `npm test`, the real lab with
// AICERINE_CONTRACT_TARGET=lab (`npm run test:lab`). A live migration, the abort of a held one,
// an injected failure retried then quarantined: the same expectations on both clouds.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Actuator } from '../../src/cloud/actuator.js';
import { type CloudSession, openSession } from '../../src/cloud/session.js';
import { Executor } from '../../src/executor/index.js';
import type { PlannedMove } from '../../src/executor/journal.js';
import { MemoryJournal } from '../../src/executor/memory-journal.js';
import { OpenStackExecutorCloud } from '../../src/executor/openstack-cloud.js';
import type { QuarantineEntry } from '../../src/executor/ports.js';
import { type ExecutorSettingsInput, resolveExecutorSettings } from '../../src/executor/settings.js';
import { MigrationSlots } from '../../src/executor/slots.js';
import { openWorld, type World } from './world.js';

let w: World;
let reader: CloudSession;
let actuator: Actuator;
beforeAll(async () => {
  // Every wait of these tests is the executor's, on the world's clock: on the simulator it runs 4x
  // faster (a migration, the 8 s timeout and the backoff a quarter of their time on the wall).
  w = await openWorld({ simSpeed: 4 });
  // The same cloud account, opened for each role: reads go through the reader, writes through the
  // actuator, and either refuses the other's calls before sending.
  reader = await openSession({
    config: w.session.config,
    credential: { kind: 'reader', label: 'reader (contract)' },
  });
  actuator = await Actuator.open({ config: w.session.config, credential: { label: 'actuator (contract)' } });
}, 300_000);
afterAll(async () => {
  await w?.close();
}, 300_000);

function executor(settings: ExecutorSettingsInput, timeoutSeconds = 300) {
  const resolved = resolveExecutorSettings({ pollSeconds: 0.5, settleSeconds: 1, ...settings });
  const quarantined: QuarantineEntry[] = [];
  const ex = new Executor({
    journal: new MemoryJournal(),
    cloud: new OpenStackExecutorCloud(reader, actuator),
    clock: w.clock,
    settings: resolved,
    slots: new MigrationSlots(resolved.limits),
    timeoutFor: () => timeoutSeconds,
    quarantine: { quarantine: async (e) => void quarantined.push(e) },
  });
  return { ex, quarantined };
}

const one = (serverId: string, from: string, to: string): PlannedMove[] => [
  { step: 1, wave: 1, serverId, from, to, estimatedSeconds: 10 },
];
const window = { deadline: null, shouldStop: () => false };

describe(`executor contract`, () => {
  it('live-migrates a planned move: ACTIVE on the destination and the record completed', async () => {
    const c = w.servers.c;
    const to = c.host === w.hosts[2] ? w.hosts[0] : w.hosts[2];
    const { ex } = executor({});
    const s = await ex.start(
      { aggregate: 'contract', planId: null, startedBy: 'test', moves: one(c.id, c.host, to) },
      window,
    );
    expect(s.moves[0]).toMatchObject({ state: 'completed', attempt: 1 });
    const server = await w.session.nova.getServer(c.id);
    expect(server).toMatchObject({ host: to, status: 'ACTIVE', taskState: null });
    const history = await w.session.nova.listMigrations({ serverId: c.id, migrationType: 'live-migration' });
    expect(history.find((m) => m.id === s.moves[0]!.novaMigrationId)?.status).toBe('completed');
    c.host = to;
  }, 180_000);

  it('aborts a held migration on timeout and confirms the server stayed on its source', async () => {
    const c = w.servers.c;
    const to = c.host === w.hosts[1] ? w.hosts[0] : w.hosts[1];
    await w.holdMigrations(120);
    try {
      const { ex, quarantined } = executor({ retry: { attempts: 1 } }, 8);
      const s = await ex.start(
        { aggregate: 'contract', planId: null, startedBy: 'test', moves: one(c.id, c.host, to) },
        window,
      );
      expect(s.moves[0]!.state).toBe('failed');
      expect(s.moves[0]!.detail).toMatch(/aborted \(timed out after 8 s\); the server stayed on/);
      expect(await w.session.nova.getServer(c.id)).toMatchObject({
        host: c.host,
        status: 'ACTIVE',
        taskState: null,
      });
      const history = await w.session.nova.listMigrations({
        serverId: c.id,
        migrationType: 'live-migration',
      });
      expect(history.find((m) => m.id === s.moves[0]!.novaMigrationId)?.status).toBe('cancelled');
      expect(quarantined).toHaveLength(1);
    } finally {
      await w.holdMigrations(0);
    }
  }, 180_000);

  it('retries an injected failure with backoff, then quarantines the server with Nova’s status', async () => {
    const b = w.servers.b;
    await w.failMigrations([b.id]);
    try {
      const { ex, quarantined } = executor({
        retry: { attempts: 2, backoffBaseSeconds: 1, backoffMaxSeconds: 5 },
      });
      const s = await ex.start(
        { aggregate: 'contract', planId: null, startedBy: 'test', moves: one(b.id, b.host, w.hosts[2]) },
        window,
      );
      expect(s.moves[0]).toMatchObject({ state: 'failed', attempt: 2 });
      expect(await w.session.nova.getServer(b.id)).toMatchObject({ host: b.host, status: 'ACTIVE' });
      expect(quarantined).toEqual([
        expect.objectContaining({
          serverId: b.id,
          attempts: 2,
          novaFault: expect.stringMatching(/failed|error/),
        }),
      ]);
    } finally {
      await w.failMigrations(null);
    }
  }, 180_000);
});
