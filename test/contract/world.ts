// The world a contract test runs in: the simulator (default) or the real lab
// (AICERINE_CONTRACT_TARGET=lab, with the lab's openrc sourced). Both give the same shape of
// fixture: three compute hosts, three servers, an anti-affinity group of two of them and an
// aggregate, so the very same client calls can be checked against both.
import type { CloudSession } from '../../src/cloud/session.js';
import { openSession } from '../../src/cloud/session.js';
import { type Clock, systemClock } from '../../src/executor/ports.js';
import type { Host, Server, Snapshot } from '../../src/model/snapshot.js';
import { DEFAULT_POLICY } from '../../src/policy/defaults.js';
import { SimClock } from '../../src/sim/clock.js';
import { simAdminConfig } from '../../src/sim/connect-info.js';
import { type SimServerHandle, startSimServer } from '../../src/sim/http/server.js';
import { staticLoadModel } from '../../src/sim/load.js';
import { SimCloud } from '../../src/sim/model.js';
import {
  adminSession,
  bootServers,
  cleanupLab,
  createAggregate,
  createServerGroup,
  labEnv,
  setControl,
} from '../lab/lab.js';

export const PREFIX = 'aic-contract-';
export type Target = 'sim' | 'lab';

export function contractTarget(): Target {
  const t = process.env.AICERINE_CONTRACT_TARGET ?? 'sim';
  if (t !== 'sim' && t !== 'lab')
    throw new Error(`AICERINE_CONTRACT_TARGET: expected "sim" or "lab", got ${JSON.stringify(t)}`);
  return t;
}

export interface FixtureServer {
  id: string;
  name: string;
  host: string;
}

export interface World {
  target: Target;
  session: CloudSession;
  /** Three enabled compute hosts; servers a and c start on hosts[0], b on hosts[1]. */
  hosts: [string, string, string];
  servers: { a: FixtureServer; b: FixtureServer; c: FixtureServer };
  groupId: string;
  aggregateName: string;
  /** Password of the admin user, for error-path tests. */
  authUrl: string;
  /** The cloud's time: the wall clock on the lab, the simulator's (maybe faster) clock on it. */
  clock: Clock;
  /** Keep live migrations running this long (0: as fast as the cloud goes). */
  holdMigrations(seconds: number): Promise<void>;
  /** Make live migrations of these servers fail (null: none). */
  failMigrations(serverIds: string[] | null): Promise<void>;
  close(): Promise<void>;
}

export interface WorldOptions {
  /**
   * Virtual seconds per wall second of the simulator (default 1, the lab's pace). Only for tests
   * that take time from `World.clock`, never the wall: the lab ignores it.
   */
  simSpeed?: number;
}

export async function openWorld(opts: WorldOptions = {}): Promise<World> {
  return contractTarget() === 'lab' ? openLabWorld() : openSimWorld(opts.simSpeed ?? 1);
}

const LAB_FLAVOR = { name: 'm1.small', vcpus: 1, ramMB: 2048, diskGB: 20, extraSpecs: {} };

function labLikeHost(name: string, aggregates: string[]): Host {
  return {
    name,
    availabilityZone: 'nova',
    aggregates,
    service: { state: 'up', status: 'enabled', forcedDown: false },
    inventory: {
      VCPU: { total: 16, reserved: 0, allocationRatio: 4 },
      MEMORY_MB: { total: 65536, reserved: 512, allocationRatio: 1 },
      DISK_GB: { total: 1000, reserved: 0, allocationRatio: 1 },
    },
    usage: {},
  };
}

async function openSimWorld(speed: number): Promise<World> {
  const hosts: [string, string, string] = ['compute1', 'compute2', 'compute3'];
  const aggregateName = `${PREFIX}agg`;
  const mk = (n: number, name: string, host: string): Server => ({
    id: `c0000000-0000-4000-8000-00000000000${n}`,
    name,
    projectId: 'contract0000000000000000000000aa',
    host,
    status: 'ACTIVE',
    taskState: null,
    flavor: LAB_FLAVOR,
    sharedStorage: false,
  });
  const a = mk(1, `${PREFIX}a`, hosts[0]);
  const b = mk(2, `${PREFIX}b`, hosts[1]);
  const c = mk(3, `${PREFIX}c`, hosts[0]);
  const groupId = 'c1000000-0000-4000-8000-000000000001';
  const snap: Snapshot = {
    format: 'aicerine-snapshot/1',
    takenAt: new Date().toISOString(),
    source: 'contract',
    hosts: [
      labLikeHost(hosts[0], [aggregateName]),
      labLikeHost(hosts[1], [aggregateName]),
      labLikeHost(hosts[2], []),
      labLikeHost('compute4', []),
    ],
    servers: [a, b, c],
    serverGroups: [
      {
        id: groupId,
        name: `${PREFIX}group`,
        policy: 'anti-affinity',
        members: [a.id, b.id],
        projectId: a.projectId,
      },
    ],
  };
  const cloud = new SimCloud(snap, {
    clock: new SimClock({ speed }),
    load: staticLoadModel(),
    // The lab's fake driver finishes a live migration in about 1 s (shared/openstack-lab README);
    // the planner's default model gives these 2 GB servers 7.2 s. Without its 5 s fixed overhead:
    // 2.7 s, scheduling and completion lag included, `running` for 1.5 s.
    costModel: { ...DEFAULT_POLICY.costModel, overheadSeconds: 0.5 },
  });
  const sim: SimServerHandle = await startSimServer({ cloud, password: 'secret' });
  const session = await openSession({
    config: simAdminConfig(sim.authUrl, 'secret', 'contract test (simulator)'),
    prometheusUrl: `${sim.url}/prometheus`,
  });
  const fx = (s: Server): FixtureServer => ({ id: s.id, name: s.name, host: s.host });
  return {
    target: 'sim',
    session,
    hosts,
    servers: { a: fx(a), b: fx(b), c: fx(c) },
    groupId,
    aggregateName,
    authUrl: sim.authUrl,
    clock: {
      now: () => cloud.clock.nowMs(),
      sleep: (ms) => new Promise((r) => setTimeout(r, Math.max(0, ms / speed))),
    },
    holdMigrations: async (seconds) => {
      cloud.timing.holdSeconds = seconds;
    },
    failMigrations: async (ids) => {
      cloud.failServers.clear();
      for (const id of ids ?? []) cloud.failServers.add(id);
    },
    close: () => sim.close(),
  };
}

async function openLabWorld(): Promise<World> {
  const session = await adminSession();
  await cleanupLab(session, PREFIX);
  const computes = (await session.nova.listServices('nova-compute'))
    .filter((s) => s.state === 'up' && s.status === 'enabled')
    .map((s) => s.host)
    .sort();
  if (computes.length < 3) throw new Error(`lab: need 3 enabled compute hosts, found ${computes.join(', ')}`);
  const hosts: [string, string, string] = [
    computes[0] as string,
    computes[1] as string,
    computes[2] as string,
  ];
  const aggregateName = `${PREFIX}agg`;
  await createAggregate(session, aggregateName, [hosts[0], hosts[1]]);
  const groupId = await createServerGroup(session, `${PREFIX}group`, 'anti-affinity');
  const booted = await bootServers(session, [
    { name: `${PREFIX}a`, host: hosts[0], group: groupId },
    { name: `${PREFIX}b`, host: hosts[1], group: groupId },
    { name: `${PREFIX}c`, host: hosts[0] },
  ]);
  const byName = (n: string): FixtureServer => {
    const s = booted.find((x) => x.name === `${PREFIX}${n}`);
    if (!s?.host) throw new Error(`lab: server ${PREFIX}${n} not booted`);
    return { id: s.id, name: s.name, host: s.host };
  };
  return {
    target: 'lab',
    session,
    hosts,
    servers: { a: byName('a'), b: byName('b'), c: byName('c') },
    groupId,
    aggregateName,
    authUrl: labEnv('OS_AUTH_URL'),
    clock: systemClock,
    holdMigrations: (seconds) =>
      setControl('live_migration_seconds', seconds > 0 ? String(seconds) : undefined),
    failMigrations: (ids) =>
      setControl('live_migration_fail', ids === null ? undefined : `${ids.join('\n')}\n`),
    close: async () => {
      await setControl('live_migration_seconds', undefined);
      await setControl('live_migration_fail', undefined);
      await cleanupLab(session, PREFIX);
    },
  };
}
