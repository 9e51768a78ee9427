// The real `openstack` client (Debian's python3-openstackclient and python3-osc-placement,
// installed by .ci/apt-packages.txt) against the simulator, pointed at it with OS_* variables
// exactly as `aicerine sim` prints them.
import { execFile, spawn } from 'node:child_process';
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

/**
 * Several read commands in one `openstack` process: its interactive shell reads them from stdin
 * and prints one JSON document per command. Each start of the Python client costs 1.5-2 s of
 * CPU; the read-only commands below share one. A command that fails prints no document, so
 * the count is checked.
 */
function openstackBatch(commands: string[][]): Promise<unknown[]> {
  for (const c of commands)
    for (const a of c)
      if (!/^[\w.:/-]+$/.test(a)) throw new Error(`openstackBatch: argument ${a} needs quoting`);
  return new Promise((resolvePromise, reject) => {
    const child = spawn('openstack', [], { env: simEnv(), stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => {
      out += c;
    });
    child.stderr.setEncoding('utf8').on('data', (c: string) => {
      err += c;
    });
    child.on('error', reject);
    child.on('close', (code) => {
      // Documents are printed whole, each closing with a bracket or brace alone on its line.
      const docs: unknown[] = [];
      let pending: string[] = [];
      for (const line of out.split('\n')) {
        pending.push(line);
        if (line === ']' || line === '}') {
          docs.push(JSON.parse(pending.join('\n')));
          pending = [];
        }
      }
      if (code !== 0 || docs.length !== commands.length)
        reject(
          new Error(
            `openstack (${commands.length} commands) exited ${code}, ${docs.length} documents:\n${err}`,
          ),
        );
      else resolvePromise(docs);
    });
    child.stdin.end(commands.map((c) => `${[...c, '-f', 'json'].join(' ')}\n`).join(''));
  });
}

type Row = Record<string, unknown>;
const T = 60_000;

describe('openstack CLI against the simulator', () => {
  // The read-only commands run first, in one process (openstackBatch); each test checks its own.
  const reads = new Map<string, unknown>();
  beforeAll(async () => {
    const c1 = sim.cloud.hostsByName.get('c1');
    const commands: Record<string, string[]> = {
      servers: ['server', 'list', '--all-projects', '--long'],
      hypervisors: ['hypervisor', 'list'],
      services: ['compute', 'service', 'list'],
      aggregates: ['aggregate', 'list'],
      gold: ['aggregate', 'show', 'gold'],
      groups: ['server', 'group', 'list', '--all-projects'],
      providers: ['resource', 'provider', 'list'],
      inventory: ['resource', 'provider', 'inventory', 'list', c1?.nodeUuid as string],
    };
    const docs = await openstackBatch(Object.values(commands));
    for (const [i, name] of Object.keys(commands).entries()) reads.set(name, docs[i]);
  }, T);

  it(
    'server list --all-projects --long',
    async () => {
      const rows = reads.get('servers') as Row[];
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
      const hyp = reads.get('hypervisors') as Row[];
      expect(hyp.map((r) => r['Hypervisor Hostname']).sort()).toEqual(['c1', 'c2', 'c3']);
      const svc = reads.get('services') as Row[];
      const computes = svc.filter((r) => r.Binary === 'nova-compute');
      expect(computes.map((r) => r.Host).sort()).toEqual(['c1', 'c2', 'c3']);
      expect(computes.every((r) => r.State === 'up' && r.Status === 'enabled')).toBe(true);
    },
    T,
  );

  it(
    'aggregate list and show',
    async () => {
      const aggs = reads.get('aggregates') as Row[];
      expect(aggs.map((a) => a.Name).sort()).toEqual(['gold', 'silver']);
      const gold = reads.get('gold') as Row;
      expect(gold.hosts).toEqual(['c1', 'c2']);
    },
    T,
  );

  it(
    'server group list --all-projects',
    async () => {
      const groups = reads.get('groups') as Row[];
      expect(groups).toHaveLength(1);
      expect(groups[0]).toMatchObject({ ID: GROUP_ID, Name: 'db' });
    },
    T,
  );

  it(
    'resource provider list and inventory list',
    async () => {
      const rps = reads.get('providers') as Row[];
      expect(rps.map((r) => r.name).sort()).toEqual(['c1', 'c2', 'c3']);
      const inv = reads.get('inventory') as Row[];
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
