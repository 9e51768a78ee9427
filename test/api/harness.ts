// An API on a fresh in-memory store with a small configuration, and the simulator's Keystone to
// validate tokens against (real HTTP, the same GET /v3/auth/tokens a real Keystone answers).

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ZodApp } from '../../src/api/context.js';
import { StoreServiceControl } from '../../src/api/control.js';
import { KeystoneTokenValidator } from '../../src/api/keystone.js';
import type { ApiLogger } from '../../src/api/logger.js';
import type { ApiMetrics } from '../../src/api/metrics.js';
import { type ApiAuth, buildApi } from '../../src/api/server.js';
import type { SnapshotSource, TokenIssuer } from '../../src/api/sources.js';
import { parseServiceConfig } from '../../src/config/load.js';
import type { ServiceConfig } from '../../src/config/types.js';
import type { ReplicaDirectory } from '../../src/coordination/ownership.js';
import type { Host, Snapshot } from '../../src/model/snapshot.js';
import type { SimServerHandle } from '../../src/sim/http/server.js';
import { openStore, type Store } from '../../src/store/index.js';
import { host, server, snapshot } from '../sim/fixtures.js';
import { adminToken, startFrozen } from '../sim/http/helpers.js';

export const NOW = new Date('2026-11-30T12:00:00.000Z');

export async function testConfig(): Promise<ServiceConfig> {
  const { config } = await parseServiceConfig(
    {
      openstack: { actuator: { cloud: 'lab' } },
      aggregates: {
        gold: { mode: 'assisted', windows: ['Mon-Sun 00:00 - 24:00 UTC'] },
        silver: { mode: 'observe' },
      },
    },
    { baseDir: '/' },
  );
  return config;
}

export interface Harness {
  app: ZodApp;
  store: Store;
  control: StoreServiceControl;
  config: ServiceConfig;
  /** Where recorded snapshots go (a temporary folder). */
  snapshotDir: string;
  close(): Promise<void>;
}

/**
 * The cloud the loop "planned on last" for the API tests: gold has a hot host (g1: six servers),
 * g2 with one and g3 empty; silver has s1 and s2 (disabled for maintenance).
 */
export function latestSnapshot(): Snapshot {
  const gold = (name: string) => host(name, { aggregates: ['gold'] });
  const silver = (name: string, extra: Partial<Host> = {}) =>
    host(name, { aggregates: ['silver'], ...extra });
  return snapshot(
    [
      gold('g1'),
      gold('g2'),
      gold('g3'),
      silver('s1'),
      silver('s2', {
        service: { state: 'up', status: 'disabled', forcedDown: false, disabledReason: 'maintenance' },
      }),
    ],
    [
      ...Array.from({ length: 6 }, (_, i) => server(i + 1, 'g1', 8192)),
      server(7, 'g2', 8192),
      server(8, 's1', 4096),
      server(9, 's2', 4096),
    ].map((s) => ({ ...s, load: { cpu: 1.5, memoryMB: s.flavor.ramMB * 0.9 } })),
    { takenAt: '2026-11-30T11:58:00.000Z' },
  );
}

export interface HarnessExtra {
  logger?: ApiLogger;
  metrics?: ApiMetrics;
  /** Default: the latest snapshot above; null: an API without the loop. */
  snapshots?: SnapshotSource | null;
  login?: TokenIssuer;
  replicas?: ReplicaDirectory;
}

export async function startApi(auth: ApiAuth, extra: HarnessExtra = {}): Promise<Harness> {
  const store = await openStore({ kind: 'sqlite', path: ':memory:' });
  const config = await testConfig();
  const control = new StoreServiceControl(store, () => NOW);
  const snapshotDir = await mkdtemp(join(tmpdir(), 'aic-api-snapshots-'));
  const { snapshots, ...rest } = extra;
  const source: SnapshotSource | null =
    snapshots === undefined
      ? {
          latest: () => latestSnapshot(),
          record: async () => ({ ...latestSnapshot(), takenAt: NOW.toISOString() }),
          lastDecision: (aggregate) =>
            aggregate === 'gold'
              ? {
                  at: NOW.toISOString(),
                  started: 0,
                  summary:
                    'aggregate cooldown until 2026-12-01T12:15:00.000Z: no balancing now (imbalance 0.05)',
                }
              : null,
        }
      : snapshots;
  const app = await buildApi({
    store,
    config,
    control,
    auth,
    now: () => NOW,
    snapshotDir,
    ...(source !== null ? { snapshots: source } : {}),
    ...rest,
  });
  return {
    app,
    store,
    control,
    config,
    snapshotDir,
    async close() {
      await app.close();
      await store.close();
      await rm(snapshotDir, { recursive: true, force: true });
    },
  };
}

export interface SimKeystone {
  sim: SimServerHandle;
  validator: KeystoneTokenValidator;
  /** A token of a user with exactly these roles (a user made for it in the simulator). */
  tokenWithRoles(roles: string[]): Promise<string>;
  adminToken(): Promise<string>;
}

let users = 0;

export async function simKeystone(
  opts: { cacheTtlMs?: number; now?: () => number } = {},
): Promise<SimKeystone> {
  const sim = await startFrozen(snapshot([host('compute-01')], []));
  const service = await adminToken(sim);
  const validator = new KeystoneTokenValidator({
    identityUrl: sim.authUrl,
    serviceToken: async () => service,
    // Its default 10 s ran out on a loaded machine (a 503 where the test expects 401); the
    // simulator answers, only late.
    timeoutMs: 60_000,
    ...opts,
  });
  return {
    sim,
    validator,
    adminToken: () => adminToken(sim),
    async tokenWithRoles(roles) {
      const ks = sim.keystone;
      const admin = ks.userByName('admin')!;
      const project = admin.roles.keys().next().value as string;
      const name = `user-${++users}`;
      const user = { id: `uid-${name}`, name, password: 'pw', roles: new Map([[project, roles]]) };
      ks.users.set(user.id, user);
      return ks.issue(user, project, ['password'], Date.now()).token;
    },
  };
}

export async function seedPlan(
  store: Store,
  aggregate: string,
  moves: number,
  expiresAt: string | null = null,
) {
  const { planFor } = await import('../store/fixtures/plan.js');
  return store.plans.create({
    aggregate,
    mode: 'assisted',
    plan: planFor(aggregate, moves),
    createdAt: '2026-11-30T11:59:30.000Z',
    expiresAt,
  });
}
