// The split between the credentials is in the types: `npm run typecheck` fails if any line
// marked @ts-expect-error below starts to compile (a read through the actuator, a write through
// the reader's ports, a plain session where only an actuator will do). The runtime half, a
// session refusing another kind's calls before sending, is tested here as well.
import { describe, expect, it } from 'vitest';
import { Actuator } from '../../src/cloud/actuator.js';
import { isCloudError } from '../../src/cloud/errors.js';
import { type CloudSession, openSession } from '../../src/cloud/session.js';
import type { ExecutorReads, ExecutorWrites } from '../../src/executor/openstack-cloud.js';
import { OpenStackExecutorCloud } from '../../src/executor/openstack-cloud.js';
import type { RatioPlacementPort, RatioWritePort } from '../../src/prevention/writer.js';
import { startSimSession } from '../fixtures/sim-session.js';
import { host, server, snapshot } from '../sim/fixtures.js';

// Compile-time only: these functions are never called; typecheck judges them.
const compileOnly = [
  function readsWithTheActuator(a: Actuator) {
    // @ts-expect-error an Actuator has no Nova client to read with
    return a.nova.listServers();
  },
  function readsPlacementWithTheActuator(a: Actuator) {
    // @ts-expect-error nor a Placement client
    return a.placement.getInventories('rp');
  },
  function writesThroughTheExecutorReads(r: ExecutorReads) {
    // @ts-expect-error the executor's reads have no live migration
    return r.nova.liveMigrate('s', 'h');
  },
  function writesThroughTheRatioReads(p: RatioPlacementPort) {
    // @ts-expect-error the ratio writer's reads have no inventory write
    return p.updateInventory('rp', 'VCPU', (i: unknown) => i);
  },
  function aSessionAsTheActuator(s: CloudSession): ExecutorWrites {
    // @ts-expect-error a session (the reader) is not an actuator
    return s;
  },
  function aSessionAsTheRatioActuator(s: CloudSession): RatioWritePort {
    // @ts-expect-error nor for the ratio writer
    return s;
  },
  function theExecutorNeedsAnActuator(s: CloudSession) {
    // @ts-expect-error the executor's cloud takes the reader's reads and an actuator
    return new OpenStackExecutorCloud(s, s);
  },
];

describe('sessions opened for a role', () => {
  it('have their split in the types (the @ts-expect-error lines above)', () => {
    expect(compileOnly.map((f) => f.name)).toHaveLength(7);
  });

  it('refuse another kind of call before sending it, and an Actuator needs an actuator session', async () => {
    const w = await startSimSession(snapshot([host('c1'), host('c2')], [server(1, 'c1')]));
    try {
      const reader = await openSession({
        config: w.session.config,
        credential: { kind: 'reader', label: 'reader (test)' },
      });
      const sent = reader.stats.total;
      const migrate = await reader.nova
        .liveMigrate('00000000-0000-4000-8000-000000000001', 'c2')
        .catch((e: unknown) => e);
      expect(isCloudError(migrate, 'not-allowed')).toBe(true);
      expect((migrate as Error).message).toMatch(
        /^compute: POST \/compute\/v2\.1\/servers\/[^/]+\/action not sent: the reader \(test\) credential is not meant for it/,
      );
      // Only the version document (no token) went out, never the POST.
      expect(reader.stats.total - sent).toBeLessThanOrEqual(1);
      expect(w.sim.cloud.migrations).toHaveLength(0);
      expect(() => Actuator.of(reader)).toThrow(
        /needs a session opened for the actuator credential, not reader/,
      );
      expect(() => Actuator.of(w.session)).toThrow(/not an unrestricted one/);
      // The actuator refuses reads the same way (through its session, which nothing else can reach).
      const actuatorSession = await openSession({
        config: w.session.config,
        credential: { kind: 'actuator', label: 'actuator (test)' },
      });
      const list = await actuatorSession.nova.listServers().catch((e: unknown) => e);
      expect(isCloudError(list, 'not-allowed')).toBe(true);
      await Actuator.of(actuatorSession).liveMigrate('00000000-0000-4000-8000-000000000001', 'c2');
      expect(w.sim.cloud.migrations).toHaveLength(1);
    } finally {
      await w.close();
    }
  });
});
