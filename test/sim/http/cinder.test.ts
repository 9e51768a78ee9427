// The simulator's Cinder v3 against what cinder-api does (cinder/api/v3/volumes.py,
// cinder/volume/api.py get_all and delete, cinder/db/api.py volume_get_all_by_project): the
// catalog entry, admin-only filters, paging at osapi_max_limit, delete refusals, cascade, and
// the detach that follows a server's deletion in Nova.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { VOLUME_DELETE_REFUSED } from '../../../src/sim/cinder-state.js';
import type { SimServerHandle } from '../../../src/sim/http/server.js';
import { keystoneId } from '../../../src/sim/ids.js';
import { ADMIN_PROJECT, DEFAULT_TIMING as T } from '../../../src/sim/model.js';
import { host, PROJECT as P, server, snapshot } from '../fixtures.js';
import { adminToken, call, type Reply, startFrozen } from './helpers.js';

const Q = 'q0000000000000000000000000000002';
const DEMO = keystoneId('project', 'demo');

let sim: SimServerHandle;
let admin: string;
let cinder: string;

async function demoToken(): Promise<string> {
  const res = await call(`${sim.authUrl}/auth/tokens`, null, {
    method: 'POST',
    body: {
      auth: {
        identity: {
          methods: ['password'],
          password: { user: { name: 'demo', domain: { name: 'Default' }, password: 'pw' } },
        },
        scope: { project: { name: 'demo', domain: { name: 'Default' } } },
      },
    },
  });
  return res.headers.get('x-subject-token') as string;
}

const mv = (v: string) => ({ headers: { 'OpenStack-API-Version': `volume ${v}` } });
type Vol = Record<string, unknown> & { id: string; name: string; status: string };
const vols = (r: Reply) => (r.body as { volumes: Vol[] }).volumes;
const names = (r: Reply) => vols(r).map((v) => v.name);

beforeEach(async () => {
  sim = await startFrozen(
    snapshot([host('c1')], [server(1, 'c1', 2048), server(2, 'c1', 2048, { projectId: Q })]),
  );
  admin = await adminToken(sim);
  cinder = `${sim.url}/volume/v3/${ADMIN_PROJECT}`;
});
afterEach(() => sim.close());

/** Seeds one second apart so the newest-first order is visible. */
function seed(...list: { name: string; projectId: string; attachedTo?: string }[]): string[] {
  return list.map((v) => {
    sim.cloud.advance(1);
    return sim.cloud.cinder.createVolume({ ...v, sizeGB: 10 }).id;
  });
}

describe('catalog and versions', () => {
  it("lists block-storage and volumev3 at /volume/v3/<the token's project>, and answers versions without a token", async () => {
    const tok = await call(`${sim.authUrl}/auth/tokens`, admin, { headers: { 'X-Subject-Token': admin } });
    const catalog = (tok.body as { token: { catalog: { type: string; endpoints: { url: string }[] }[] } })
      .token.catalog;
    for (const type of ['block-storage', 'volumev3'])
      expect(catalog.find((c) => c.type === type)?.endpoints[0]?.url).toBe(cinder);
    const root = await call(`${sim.url}/volume`, null);
    expect(root.status).toBe(300);
    expect(root.body).toMatchObject({ versions: [{ id: 'v3.0', min_version: '3.0', version: '3.71' }] });
    const list = await call(`${cinder}/volumes`, admin);
    expect(list.headers.get('openstack-api-version')).toBe('volume 3.0');
    expect((await call(`${cinder}/volumes`, admin, mv('3.72'))).status).toBe(406);
    expect((await call(`${cinder}/volumes`, null)).status).toBe(401);
  });

  it("refuses a project id in the URL that is not the token's, as cinder's wsgi layer does", async () => {
    const r = await call(`${sim.url}/volume/v3/${P}/volumes`, admin);
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ badRequest: { code: 400, message: 'Malformed request url' } });
    // Without a project in the path (optional since 3.67) the token's project is used.
    expect((await call(`${sim.url}/volume/v3/volumes`, admin)).status).toBe(200);
  });
});

describe('listing: all_tenants and project_id as cinder applies them', () => {
  beforeEach(() => {
    seed(
      { name: 'p-1', projectId: P },
      { name: 'q-1', projectId: Q },
      { name: 'admin-1', projectId: ADMIN_PROJECT },
      { name: 'p-2', projectId: P },
      { name: 'demo-1', projectId: DEMO },
    );
  });

  it('for an admin: project_id selects a project only together with all_tenants', async () => {
    expect(names(await call(`${cinder}/volumes?all_tenants=1&project_id=${P}`, admin))).toEqual([
      'p-2',
      'p-1',
    ]);
    expect(names(await call(`${cinder}/volumes?all_tenants=true`, admin))).toEqual([
      'demo-1',
      'p-2',
      'admin-1',
      'q-1',
      'p-1',
    ]);
    // Without all_tenants cinder overwrites project_id with the caller's own project.
    expect(names(await call(`${cinder}/volumes?project_id=${P}`, admin))).toEqual(['admin-1']);
    // all_tenants=0 stays in the filters, is no volume column, and nothing matches.
    expect(names(await call(`${cinder}/volumes?all_tenants=0`, admin))).toEqual([]);
    // So does a filter cinder has no column for (tenant_id is the view's name, not the column's).
    expect(names(await call(`${cinder}/volumes?all_tenants=1&tenant_id=${P}`, admin))).toEqual([]);
    const bad = await call(`${cinder}/volumes?all_tenants=maybe`, admin);
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({
      badRequest: { code: 400, message: "Value 'maybe' for 'all_tenants' is not a boolean." },
    });
    const unmodelled = await call(`${cinder}/volumes?all_tenants=1&host=x`, admin);
    expect(unmodelled.status).toBe(400);
    expect((unmodelled.body as { badRequest: { message: string } }).badRequest.message).toBe(
      'host=x: the simulator does not filter volumes by host',
    );
  });

  it("for a non-admin: the admin filters are dropped before 3.31 (its own project's volumes) and refused from 3.31", async () => {
    const demo = await demoToken();
    const url = `${sim.url}/volume/v3/${DEMO}/volumes`;
    expect(names(await call(`${url}?all_tenants=1&project_id=${P}`, demo))).toEqual(['demo-1']);
    const refused = await call(`${url}?all_tenants=1&project_id=${P}`, demo, mv('3.31'));
    expect(refused.status).toBe(400);
    expect(refused.body).toEqual({
      badRequest: { code: 400, message: 'Invalid filters project_id are found in query options.' },
    });
    // all_tenants alone is dropped silently (the cinder client always sends it).
    expect(names(await call(`${url}?all_tenants=1`, demo, mv('3.60')))).toEqual(['demo-1']);
    const other = vols(await call(`${cinder}/volumes?all_tenants=1&project_id=${P}`, admin))[0]!.id;
    expect((await call(`${url}/${other}`, demo)).status).toBe(404);
    const del = await call(`${url}/${other}`, demo, { method: 'DELETE' });
    expect(del.body).toEqual({ itemNotFound: { code: 404, message: `Volume ${other} could not be found.` } });
  });

  it('shows id, name and links in the list, the owner and attachments in the detail', async () => {
    const [attached] = seed({ name: 'p-att', projectId: P, attachedTo: server(1, 'c1').id });
    const summary = vols(await call(`${cinder}/volumes?all_tenants=1&project_id=${P}`, admin))[0]!;
    expect(Object.keys(summary).sort()).toEqual(['id', 'links', 'name']);
    const detail = vols(await call(`${cinder}/volumes/detail?all_tenants=1&project_id=${P}`, admin));
    expect(detail.map((v) => [v.name, v.status, v['os-vol-tenant-attr:tenant_id']])).toEqual([
      ['p-att', 'in-use', P],
      ['p-2', 'available', P],
      ['p-1', 'available', P],
    ]);
    expect(detail[0]).toMatchObject({
      bootable: 'false',
      size: 10,
      attachments: [
        { volume_id: attached, server_id: server(1, 'c1').id, host_name: 'c1', device: '/dev/vdb' },
      ],
    });
    // Nova lists it on the server (after the server's own implicit boot volume).
    const nova = await call(`${sim.url}/compute/v2.1/servers/${server(1, 'c1').id}`, admin, {
      headers: { 'OpenStack-API-Version': 'compute 2.80' },
    });
    const attachedInNova = (nova.body as { server: Record<string, { id: string }[]> }).server[
      'os-extended-volumes:volumes_attached'
    ];
    expect(attachedInNova?.map((a) => a.id)).toContain(attached);
  });
});

describe('paging', () => {
  it('stops at osapi_max_limit whatever limit asks, and links the next page with the same filters', async () => {
    sim.cloud.cinder.maxLimit = 2;
    const ids = seed(...['a', 'b', 'c', 'd', 'e'].map((n) => ({ name: n, projectId: P })), {
      name: 'q',
      projectId: Q,
    });
    const seen: string[] = [];
    let url: string | undefined = `${cinder}/volumes/detail?all_tenants=1&project_id=${P}&limit=10`;
    for (let pages = 0; url !== undefined; pages++) {
      expect(pages).toBeLessThan(5);
      const r = await call(url, admin);
      const page = vols(r);
      expect(page.length).toBeLessThanOrEqual(2);
      seen.push(...page.map((v) => v.name));
      const next = (r.body as { volumes_links?: { rel: string; href: string }[] }).volumes_links;
      url = next?.find((l) => l.rel === 'next')?.href;
      if (url !== undefined) {
        expect(url).toContain(`${cinder}/volumes/detail?`);
        expect(new URL(url).searchParams.get('project_id')).toBe(P);
      }
    }
    expect(seen).toEqual(['e', 'd', 'c', 'b', 'a']);
    // A page shorter than its limit is the last: no next link.
    const last = await call(`${cinder}/volumes?all_tenants=1&project_id=${P}&marker=${ids[1]}`, admin);
    expect(names(last)).toEqual(['a']);
    expect((last.body as Record<string, unknown>).volumes_links).toBeUndefined();
    const gone = await call(
      `${cinder}/volumes?all_tenants=1&marker=00000000-0000-4000-8000-0000000000ff`,
      admin,
    );
    expect(gone.body).toEqual({
      itemNotFound: { code: 404, message: 'Volume 00000000-0000-4000-8000-0000000000ff could not be found.' },
    });
    expect((await call(`${cinder}/volumes?limit=-1`, admin)).body).toEqual({
      badRequest: { code: 400, message: 'limit param must be positive' },
    });
  });
});

describe('delete', () => {
  const del = (id: string, q = '') => call(`${cinder}/volumes/${id}${q}`, admin, { method: 'DELETE' });
  const refused = { badRequest: { code: 400, message: VOLUME_DELETE_REFUSED } };
  const status = (id: string) => sim.cloud.cinder.volumesById.get(id)?.status;

  it('answers 202, the volume is deleting and gone after volumeDeleteSeconds; 404 when unknown', async () => {
    const [id] = seed({ name: 'v', projectId: P });
    const r = await del(id!);
    expect(r.status).toBe(202);
    expect(status(id!)).toBe('deleting');
    expect((await call(`${cinder}/volumes/${id}`, admin)).body).toMatchObject({
      volume: { status: 'deleting' },
    });
    expect((await del(id!)).body).toEqual(refused);
    sim.cloud.advance(T.volumeDeleteSeconds);
    const after = await call(`${cinder}/volumes/${id}`, admin);
    expect(after.status).toBe(404);
    expect(after.body).toEqual({ itemNotFound: { code: 404, message: `Volume ${id} could not be found.` } });
    expect((await del(id!)).status).toBe(404);
  });

  it('refuses an attached volume, even with cascade, with cinder message', async () => {
    const [id] = seed({ name: 'v', projectId: P, attachedTo: server(1, 'c1').id });
    expect((await del(id!)).body).toEqual(refused);
    expect((await del(id!, '?cascade=true')).body).toEqual(refused);
    expect(status(id!)).toBe('in-use');
  });

  it('refuses a volume with snapshots unless cascade, and cascade only when every snapshot is available or error', async () => {
    const [id, other] = seed({ name: 'v', projectId: P }, { name: 'w', projectId: P });
    const snap = sim.cloud.cinder.createSnapshot({ volumeId: id!, name: 's' });
    sim.cloud.cinder.createSnapshot({ volumeId: other!, name: 'busy', status: 'creating' });
    expect((await del(id!)).body).toEqual(refused);
    expect((await del(other!, '?cascade=true')).body).toEqual(refused);
    expect((await del(id!, '?cascade=true')).status).toBe(202);
    const snaps = await call(`${cinder}/snapshots?all_tenants=1&volume_id=${id}`, admin);
    expect(snaps.body).toMatchObject({ snapshots: [{ id: snap.id, status: 'deleting', volume_id: id }] });
    sim.cloud.advance(T.volumeDeleteSeconds);
    expect((await call(`${cinder}/snapshots/${snap.id}`, admin)).status).toBe(404);
    expect(status(id!)).toBeUndefined();
    expect(status(other!)).toBe('available');
  });

  it('refuses statuses cinder refuses, deletes from error, and a failing back end leaves error_deleting', async () => {
    const mk = (name: string, s: 'error' | 'creating' | 'extending') =>
      sim.cloud.cinder.createVolume({ name, projectId: P, status: s }).id;
    const err = mk('err', 'error');
    for (const id of [mk('creating', 'creating'), mk('extending', 'extending')])
      expect((await del(id)).body).toEqual(refused);
    sim.cloud.cinder.failDeletes.add(err);
    expect((await del(err)).status).toBe(202);
    sim.cloud.advance(T.volumeDeleteSeconds);
    expect(status(err)).toBe('error_deleting');
    expect((await del(err, '?cascade=true')).body).toEqual(refused);
  });
});

describe('a server deleted in Nova', () => {
  it('leaves its volumes detaching (still attached) for volumeDetachSeconds, then available', async () => {
    const vm = server(1, 'c1').id;
    const [id] = seed({ name: 'data', projectId: P, attachedTo: vm });
    const gone = await call(`${sim.url}/compute/v2.1/servers/${vm}`, admin, { method: 'DELETE' });
    expect(gone.status).toBe(204);
    expect((await call(`${sim.url}/compute/v2.1/servers/${vm}`, admin)).status).toBe(404);
    const detaching = (await call(`${cinder}/volumes/${id}`, admin)).body as { volume: Vol };
    expect(detaching.volume).toMatchObject({ status: 'detaching', attachments: [{ server_id: vm }] });
    expect((await call(`${cinder}/volumes/${id}?cascade=true`, admin, { method: 'DELETE' })).status).toBe(
      400,
    );
    sim.cloud.advance(T.volumeDetachSeconds);
    const available = (await call(`${cinder}/volumes/${id}`, admin)).body as { volume: Vol };
    expect(available.volume).toMatchObject({ status: 'available', attachments: [] });
    expect((await call(`${cinder}/volumes/${id}?cascade=true`, admin, { method: 'DELETE' })).status).toBe(
      202,
    );
  });

  it('has Nova delete its delete_on_termination volumes after the detach, unless they have snapshots', async () => {
    const vm = server(1, 'c1').id;
    const mk = (name: string) =>
      sim.cloud.cinder.createVolume({
        name,
        projectId: P,
        attachedTo: vm,
        deleteOnTermination: true,
        boot: true,
      }).id;
    const [root, kept] = [mk('root'), mk('kept')];
    sim.cloud.cinder.createSnapshot({ volumeId: kept, name: 'backup' });
    await call(`${sim.url}/compute/v2.1/servers/${vm}`, admin, { method: 'DELETE' });
    sim.cloud.advance(T.volumeDetachSeconds);
    expect(sim.cloud.cinder.volumesById.get(root)?.status).toBe('deleting');
    expect(sim.cloud.cinder.volumesById.get(kept)?.status).toBe('available');
    sim.cloud.advance(T.volumeDeleteSeconds);
    expect(sim.cloud.cinder.volumesById.has(root)).toBe(false);
  });
});

describe('create', () => {
  it("makes a volume in the token's project, creating then available; bad sizes name the field and value", async () => {
    const r = await call(`${cinder}/volumes`, admin, {
      method: 'POST',
      body: { volume: { size: 3, name: 'new' } },
    });
    expect(r.status).toBe(202);
    const v = (r.body as { volume: Vol }).volume;
    expect(v).toMatchObject({
      name: 'new',
      size: 3,
      status: 'creating',
      'os-vol-tenant-attr:tenant_id': ADMIN_PROJECT,
    });
    sim.cloud.advance(T.volumeCreateSeconds);
    expect((await call(`${cinder}/volumes/${v.id}`, admin)).body).toMatchObject({
      volume: { status: 'available' },
    });
    const zero = await call(`${cinder}/volumes`, admin, { method: 'POST', body: { volume: { size: 0 } } });
    expect(zero.body).toEqual({
      badRequest: {
        code: 400,
        message: 'Invalid input for field/attribute size. Value: 0. 0 is less than the minimum of 1',
      },
    });
    const text = await call(`${cinder}/volumes`, admin, {
      method: 'POST',
      body: { volume: { size: 'big' } },
    });
    expect((text.body as { badRequest: { message: string } }).badRequest.message).toMatch(
      /^Invalid input for field\/attribute size\. Value: "big"\./,
    );
    const none = await call(`${cinder}/volumes`, admin, { method: 'POST', body: { volume: { name: 'x' } } });
    expect((none.body as { badRequest: { message: string } }).badRequest.message).toBe(
      "Invalid input received: Volume size 'None' must be an integer and greater than 0",
    );
  });

  it('refuses seeds that make no sense, naming the field and the value', () => {
    expect(() => sim.cloud.cinder.createVolume({ name: 'x', projectId: P, sizeGB: 0 })).toThrow(
      'sizeGB: expected an integer >= 1, got 0',
    );
    expect(() =>
      sim.cloud.cinder.createVolume({
        name: 'x',
        projectId: P,
        attachedTo: server(1, 'c1').id,
        status: 'available',
      }),
    ).toThrow('status: an attached volume is in-use, got available');
    expect(() => sim.cloud.cinder.createSnapshot({ volumeId: 'nope', name: 's' })).toThrow(
      'Volume nope could not be found.',
    );
  });

  it('POST /sim/volumes seeds a volume in any project, attached or with snapshots; a bad field is named', async () => {
    const made = await call(`${sim.url}/sim/volumes`, null, {
      method: 'POST',
      body: {
        name: 'q-data',
        projectId: Q,
        sizeGB: 8,
        attachedTo: server(2, 'c1').id,
        snapshots: ['s1', 's2'],
      },
    });
    expect(made.status).toBe(201);
    const v = (made.body as { volume: { id: string; status: string; snapshots: string[] } }).volume;
    expect(v.status).toBe('in-use');
    expect(
      sim.cloud.cinder
        .snapshotsOf(v.id)
        .map((x) => x.id)
        .sort(),
    ).toEqual([...v.snapshots].sort());
    const bad = await call(`${sim.url}/sim/volumes`, null, {
      method: 'POST',
      body: { name: 'x', projectId: Q, status: 'broken' },
    });
    expect(bad).toMatchObject({ status: 400, body: { error: 'status: unexpected value "broken"' } });
    const unknown = await call(`${sim.url}/sim/volumes`, null, {
      method: 'POST',
      body: { name: 'x', projectId: Q, attachedTo: 'nope' },
    });
    expect(unknown).toMatchObject({ status: 404, body: { error: 'Instance nope could not be found.' } });
    expect((await call(`${sim.url}/sim/status`, null)).body).toMatchObject({
      volumes: 1,
      volumeSnapshots: 2,
    });
  });
});
