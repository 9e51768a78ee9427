// The real `openstack` client (Debian's python3-openstackclient and python3-osc-placement,
// installed by .ci/apt-packages.txt) against the simulator, pointed at it with OS_* variables
// exactly as `aicerine sim` prints them.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SimServerHandle } from '../../src/sim/http/server.js';
import { host, server, snapshot } from './fixtures.js';
import { startFrozen } from './http/helpers.js';

const run = promisify(execFile);
let sim: SimServerHandle;

const GROUP_ID = '11111111-2222-4333-8444-555555555555';

beforeAll(async () => {
  const servers = Array.from({ length: 12 }, (_, i) =>
    server(i + 1, ['c1', 'c2', 'c3'][i % 3] as string, 2048),
  );
  sim = await startFrozen(
    snapshot([host('c1'), host('c2'), host('c3', { aggregates: ['silver'] })], servers, {
      serverGroups: [
        {
          id: GROUP_ID,
          name: 'db',
          policy: 'anti-affinity',
          members: [servers[0]?.id as string, servers[1]?.id as string],
          projectId: servers[0]?.projectId as string,
        },
      ],
    }),
  );
});
afterAll(() => sim.close());

/** Only the simulator's variables: a sourced lab openrc must not leak into these runs. */
function simEnv(): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: process.env.HOME ?? '/tmp',
    OS_AUTH_URL: sim.authUrl,
    OS_USERNAME: 'admin',
    OS_PASSWORD: 'pw',
    OS_PROJECT_NAME: 'admin',
    OS_USER_DOMAIN_NAME: 'Default',
    OS_PROJECT_DOMAIN_NAME: 'Default',
    OS_REGION_NAME: 'RegionOne',
    OS_INTERFACE: 'public',
    OS_IDENTITY_API_VERSION: '3',
    OS_AUTH_TYPE: 'password',
  };
}

async function openstack(...args: string[]): Promise<unknown> {
  const { stdout } = await run('openstack', [...args, '-f', 'json'], { env: simEnv(), timeout: 60_000 });
  return JSON.parse(stdout);
}

type Row = Record<string, unknown>;
const T = 60_000;

describe('openstack CLI against the simulator', () => {
  it(
    'server list --all-projects --long',
    async () => {
      const rows = (await openstack('server', 'list', '--all-projects', '--long')) as Row[];
      expect(rows).toHaveLength(12);
      const byId = new Map(rows.map((r) => [r.ID, r]));
      for (const s of sim.cloud.servers)
        expect(byId.get(s.uuid)).toMatchObject({ Host: s.host, Status: 'ACTIVE' });
    },
    T,
  );

  it(
    'hypervisor list and compute service list',
    async () => {
      const hyp = (await openstack('hypervisor', 'list')) as Row[];
      expect(hyp.map((r) => r['Hypervisor Hostname']).sort()).toEqual(['c1', 'c2', 'c3']);
      const svc = (await openstack('compute', 'service', 'list')) as Row[];
      const computes = svc.filter((r) => r.Binary === 'nova-compute');
      expect(computes.map((r) => r.Host).sort()).toEqual(['c1', 'c2', 'c3']);
      expect(computes.every((r) => r.State === 'up' && r.Status === 'enabled')).toBe(true);
    },
    T,
  );

  it(
    'aggregate list and show',
    async () => {
      const aggs = (await openstack('aggregate', 'list')) as Row[];
      expect(aggs.map((a) => a.Name).sort()).toEqual(['gold', 'silver']);
      const gold = (await openstack('aggregate', 'show', 'gold')) as Row;
      expect(gold.hosts).toEqual(['c1', 'c2']);
    },
    T,
  );

  it(
    'server group list --all-projects',
    async () => {
      const groups = (await openstack('server', 'group', 'list', '--all-projects')) as Row[];
      expect(groups).toHaveLength(1);
      expect(groups[0]).toMatchObject({ ID: GROUP_ID, Name: 'db' });
    },
    T,
  );

  it(
    'resource provider list and inventory list',
    async () => {
      const rps = (await openstack('resource', 'provider', 'list')) as Row[];
      expect(rps.map((r) => r.name).sort()).toEqual(['c1', 'c2', 'c3']);
      const c1 = sim.cloud.hostsByName.get('c1');
      const inv = (await openstack(
        'resource',
        'provider',
        'inventory',
        'list',
        c1?.nodeUuid as string,
      )) as Row[];
      const vcpu = inv.find((r) => r.resource_class === 'VCPU');
      expect(vcpu).toMatchObject({ total: 16, allocation_ratio: 4, used: 8 });
    },
    T,
  );

  it(
    'server migrate --live-migration --host, then server migration list',
    async () => {
      // Not a member of the anti-affinity group, whose other member is on c2.
      const s = sim.cloud.servers.find((x) => x.host === 'c1' && !sim.cloud.groupOfServer.has(x.uuid));
      if (!s) throw new Error('no server on c1');
      const { stdout } = await run(
        'openstack',
        ['--os-compute-api-version', '2.30', 'server', 'migrate', '--live-migration', '--host', 'c2', s.uuid],
        { env: simEnv(), timeout: 60_000 },
      );
      expect(stdout.trim()).toBe('');
      expect(sim.cloud.serversByUuid.get(s.uuid)?.taskState).toBe('migrating');
      sim.cloud.advance(3600);
      expect(sim.cloud.serversByUuid.get(s.uuid)?.host).toBe('c2');
      const migs = (await openstack(
        '--os-compute-api-version',
        '2.59',
        'server',
        'migration',
        'list',
      )) as Row[];
      expect(migs).toHaveLength(1);
      expect(migs[0]).toMatchObject({
        'Server UUID': s.uuid,
        'Source Compute': 'c1',
        'Dest Compute': 'c2',
        Status: 'completed',
        Type: 'live-migration',
      });
    },
    T,
  );

  it(
    'volume list --all-projects --long, volume delete refused while attached, volume delete --purge',
    async () => {
      const vm = sim.cloud.servers[0];
      if (!vm) throw new Error('no server');
      const cinder = sim.cloud.cinder;
      const attached = cinder.createVolume({
        name: 'data-1',
        projectId: vm.projectId,
        sizeGB: 3,
        attachedTo: vm.uuid,
      });
      const snapped = cinder.createVolume({ name: 'data-2', projectId: vm.projectId, sizeGB: 4 });
      cinder.createSnapshot({ volumeId: snapped.id, name: 'nightly' });
      const rows = (await openstack('volume', 'list', '--all-projects', '--long')) as Row[];
      // Both made at the same (frozen) instant: cinder then orders them by id.
      const byName = new Map(rows.map((r) => [r.Name, r]));
      expect(byName.get('data-2')).toMatchObject({ Status: 'available', Size: 4, 'Attached to': [] });
      expect(byName.get('data-1')).toMatchObject({
        Status: 'in-use',
        Size: 3,
        'Attached to': [{ server_id: vm.uuid, device: '/dev/vdb' }],
      });
      const refused = await run('openstack', ['volume', 'delete', attached.id], {
        env: simEnv(),
        timeout: 60_000,
      }).then(
        () => '',
        (e: { stderr?: string }) => e.stderr ?? '',
      );
      expect(refused).toContain('Invalid volume: Volume status must be available or error');
      // --purge is cascade: the snapshot goes with the volume.
      await run('openstack', ['volume', 'delete', '--purge', snapped.id], { env: simEnv(), timeout: 60_000 });
      expect(cinder.volumesById.get(snapped.id)?.status).toBe('deleting');
      sim.cloud.advance(sim.cloud.timing.volumeDeleteSeconds);
      expect(cinder.volumesById.has(snapped.id)).toBe(false);
      expect(cinder.snapshots).toEqual([]);
    },
    T,
  );
});
