// Nova v2.1 writes an operator task makes: private flavors (create, extra specs, project access,
// delete), host aggregates (create, hosts, metadata, delete; membership mirrored into Placement
// as Nova does) and server creation through the scheduler (boot.ts). Messages are Nova's.
import { bootServer } from '../boot.js';
import { stableUuid } from '../ids.js';
import type { SimCloud, SimFlavor } from '../model.js';
import { SIM_IMAGE_ID } from './glance.js';
import { Fault, findFlavor, type NovaWrap } from './nova.js';
import { aggregateView, flavorView } from './nova-views.js';
import { type Ctx, isRecord, type Route, route, sendEmpty, sendJson, str } from './respond.js';

function bodyOf(ctx: Ctx, key: string): Record<string, unknown> {
  const body = isRecord(ctx.body) ? ctx.body : null;
  const inner = body && isRecord(body[key]) ? body[key] : null;
  if (!inner)
    throw new Fault(
      400,
      `Invalid input for field/attribute ${key}. Value: ${JSON.stringify(ctx.body)}. '${key}' is a required property`,
    );
  return inner;
}

function intField(rec: Record<string, unknown>, key: string, min: number): number {
  const raw = rec[key];
  const n = typeof raw === 'string' && /^\d+$/.test(raw) ? Number(raw) : raw;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < min) {
    throw new Fault(400, `Invalid input for field/attribute ${key}. Value: ${JSON.stringify(raw)}.`);
  }
  return n;
}

export function novaWriteRoutes(cloud: SimCloud, wrap: NovaWrap): Route[] {
  let flavorSeq = 0;
  const aggregate = (id: string) => {
    const a = cloud.aggregates.find((x) => String(x.id) === id);
    if (!a) throw new Fault(404, `Aggregate ${id} could not be found.`);
    return a;
  };

  return [
    // --- flavors
    route(
      'POST',
      '/v2.1/flavors',
      wrap('os_compute_api:os-flavor-manage:create', (ctx, v) => {
        const f = bodyOf(ctx, 'flavor');
        const name = str(f.name);
        if (!name || name.trim() !== name)
          throw new Fault(400, `Invalid input for field/attribute name. Value: ${JSON.stringify(f.name)}.`);
        if ([...cloud.flavors.values()].some((x) => x.name === name)) {
          throw new Fault(409, `Flavor with name ${name} already exists.`);
        }
        const id = str(f.id) ?? stableUuid(cloud.seed, 'flavor', ++flavorSeq, name);
        if ([...cloud.flavors.values()].some((x) => x.id === id))
          throw new Fault(409, `Flavor with ID ${id} already exists.`);
        const isPublic = f['os-flavor-access:is_public'];
        const flavor: SimFlavor = {
          id,
          intId: Math.max(0, ...[...cloud.flavors.values()].map((x) => x.intId)) + 1,
          name,
          vcpus: intField(f, 'vcpus', 1),
          ram: intField(f, 'ram', 1),
          disk: intField(f, 'disk', 0),
          extraSpecs: {},
          isPublic: isPublic !== false,
          projects: [],
        };
        cloud.flavors.set(`api:${id}`, flavor);
        sendJson(ctx, 200, { flavor: flavorView(v, flavor, true) });
      }),
    ),
    route(
      'DELETE',
      '/v2.1/flavors/{id}',
      wrap('os_compute_api:os-flavor-manage:delete', (ctx, _v, [id]) => {
        const f = findFlavor(cloud, id as string);
        for (const [k, x] of cloud.flavors) if (x === f) cloud.flavors.delete(k);
        sendEmpty(ctx, 202);
      }),
    ),
    route(
      'POST',
      '/v2.1/flavors/{id}/os-extra_specs',
      wrap('os_compute_api:os-flavor-extra-specs:create', (ctx, _v, [id]) => {
        const f = findFlavor(cloud, id as string);
        const specs = bodyOf(ctx, 'extra_specs');
        for (const [k, val] of Object.entries(specs)) {
          if (typeof val !== 'string' && typeof val !== 'number') {
            throw new Fault(
              400,
              `Invalid input for field/attribute extra_specs. Value: ${JSON.stringify(specs)}.`,
            );
          }
          f.extraSpecs[k] = String(val);
        }
        sendJson(ctx, 200, { extra_specs: { ...specs } });
      }),
    ),
    route(
      'POST',
      '/v2.1/flavors/{id}/action',
      wrap('os_compute_api:os-flavor-access:add_tenant_access', (ctx, _v, [id]) => {
        const f = findFlavor(cloud, id as string);
        const body = isRecord(ctx.body) ? ctx.body : {};
        const add = isRecord(body.addTenantAccess) ? str(body.addTenantAccess.tenant) : undefined;
        const remove = isRecord(body.removeTenantAccess) ? str(body.removeTenantAccess.tenant) : undefined;
        if (f.isPublic !== false) throw new Fault(409, 'Can not add access to a public flavor.');
        const projects = f.projects ?? [];
        if (add) {
          if (projects.includes(add)) {
            throw new Fault(
              409,
              `Flavor access already exists for flavor ${f.id} and project ${add} combination.`,
            );
          }
          projects.push(add);
        } else if (remove) {
          if (!projects.includes(remove))
            throw new Fault(404, `Flavor access not found for ${f.id} / ${remove} combination.`);
          projects.splice(projects.indexOf(remove), 1);
        } else throw new Fault(400, `There is no such action: ${Object.keys(body).join(',')}`);
        f.projects = projects;
        sendJson(ctx, 200, { flavor_access: projects.map((p) => ({ flavor_id: f.id, tenant_id: p })) });
      }),
    ),

    // --- aggregates
    route(
      'POST',
      '/v2.1/os-aggregates',
      wrap('os_compute_api:os-aggregates:create', (ctx, v) => {
        const a = bodyOf(ctx, 'aggregate');
        const name = str(a.name);
        if (!name)
          throw new Fault(400, `Invalid input for field/attribute name. Value: ${JSON.stringify(a.name)}.`);
        if (cloud.aggregates.some((x) => x.name === name))
          throw new Fault(409, `Aggregate ${name} already exists.`);
        const az = str(a.availability_zone) ?? null;
        const id = Math.max(0, ...cloud.aggregates.map((x) => x.id)) + 1;
        const agg = {
          id,
          uuid: stableUuid(cloud.seed, 'aggregate', name, id),
          name,
          az,
          hosts: [] as string[],
          metadata: az ? { availability_zone: az } : ({} as Record<string, string>),
          createdMs: cloud.nowMs(),
        };
        cloud.aggregates.push(agg);
        sendJson(ctx, 200, { aggregate: aggregateView(v, agg) });
      }),
    ),
    route(
      'DELETE',
      '/v2.1/os-aggregates/{id}',
      wrap('os_compute_api:os-aggregates:delete', (ctx, _v, [id]) => {
        const a = aggregate(id as string);
        if (a.hosts.length > 0) {
          throw new Fault(
            400,
            `Cannot remove host from aggregate ${a.id}. Reason: Host aggregate is not empty.`,
          );
        }
        cloud.aggregates.splice(cloud.aggregates.indexOf(a), 1);
        sendEmpty(ctx, 200);
      }),
    ),
    route(
      'POST',
      '/v2.1/os-aggregates/{id}/action',
      wrap('os_compute_api:os-aggregates:add_host', (ctx, v, [id]) => {
        const a = aggregate(id as string);
        const body = isRecord(ctx.body) ? ctx.body : {};
        if (isRecord(body.add_host)) {
          const name = str(body.add_host.host) ?? '';
          const h = cloud.hostsByName.get(name);
          if (!h) throw new Fault(404, `Compute host ${name} could not be found.`);
          if (a.hosts.includes(name)) throw new Fault(409, `Aggregate ${a.id} already has host ${name}.`);
          a.hosts.push(name);
          h.aggregates.push(a.name);
          // Nova mirrors the membership into the provider's Placement aggregates.
          h.rp.aggregates.add(a.uuid);
          h.rp.generation++;
        } else if (isRecord(body.remove_host)) {
          const name = str(body.remove_host.host) ?? '';
          const h = cloud.hostsByName.get(name);
          if (!h || !a.hosts.includes(name)) {
            throw new Fault(404, `Cannot remove host ${name} in aggregate ${a.id}: not found`);
          }
          a.hosts.splice(a.hosts.indexOf(name), 1);
          h.aggregates = h.aggregates.filter((x) => x !== a.name);
          h.rp.aggregates.delete(a.uuid);
          h.rp.generation++;
        } else if (isRecord(body.set_metadata) && isRecord(body.set_metadata.metadata)) {
          for (const [k, val] of Object.entries(body.set_metadata.metadata)) {
            if (val === null) delete a.metadata[k];
            else a.metadata[k] = String(val);
          }
        } else throw new Fault(400, `There is no such action: ${Object.keys(body).join(',')}`);
        sendJson(ctx, 200, { aggregate: aggregateView(v, a) });
      }),
    ),

    // --- server creation
    route(
      'POST',
      '/v2.1/servers',
      wrap(null, (ctx, v) => {
        const s = bodyOf(ctx, 'server');
        const name = str(s.name);
        if (!name)
          throw new Fault(400, `Invalid input for field/attribute name. Value: ${JSON.stringify(s.name)}.`);
        const networks = s.networks;
        const validNetworks =
          networks === 'none' || networks === 'auto' || (Array.isArray(networks) && networks.every(isRecord));
        if (!validNetworks) {
          throw new Fault(
            400,
            `Invalid input for field/attribute networks. Value: ${JSON.stringify(networks)}.`,
          );
        }
        if (Array.isArray(networks) && networks.length > 0) {
          // The simulator has no Neutron ports to bind.
          throw new Fault(
            400,
            `Network ${str((networks[0] as Record<string, unknown>).uuid) ?? ''} could not be found.`,
          );
        }
        if (str(s.imageRef) !== SIM_IMAGE_ID)
          throw new Fault(400, `Image ${str(s.imageRef) ?? ''} could not be found.`);
        const project = ctx.token?.projectId ?? '';
        let flavor: SimFlavor;
        try {
          flavor = findFlavor(cloud, str(s.flavorRef) ?? '');
        } catch {
          throw new Fault(400, `Flavor ${str(s.flavorRef) ?? ''} could not be found.`);
        }
        if (
          flavor.isPublic === false &&
          !(flavor.projects ?? []).includes(project) &&
          !ctx.token?.roles.includes('admin')
        ) {
          throw new Fault(400, `Flavor ${flavor.id} could not be found.`);
        }
        if (s.key_name !== undefined && s.key_name !== null)
          throw new Fault(400, 'Invalid key_name provided.');
        const azText = str(s.availability_zone) ?? null;
        let zone: string | null = azText;
        let forcedHost: string | null = null;
        if (azText?.includes(':')) {
          const [z, host] = azText.split(':', 2) as [string, string];
          if (!ctx.token?.roles.includes('admin')) {
            throw new Fault(
              403,
              "Policy doesn't allow os_compute_api:servers:create:forced_host to be performed.",
            );
          }
          zone = z || null;
          if (host) {
            if (!cloud.hostsByName.has(host))
              throw new Fault(400, `Compute host ${host} could not be found.`);
            forcedHost = host;
          }
        }
        const metadata: Record<string, string> = {};
        if (isRecord(s.metadata))
          for (const [k, val] of Object.entries(s.metadata)) metadata[k] = String(val);
        const server = bootServer(cloud, {
          name,
          flavor,
          projectId: project,
          userId: ctx.token?.userId ?? '',
          zone,
          forcedHost,
          metadata,
        });
        sendJson(ctx, 202, {
          server: {
            id: server.uuid,
            links: [
              { href: `${v.base}/v2.1/servers/${server.uuid}`, rel: 'self' },
              { href: `${v.base}/servers/${server.uuid}`, rel: 'bookmark' },
            ],
            'OS-DCF:diskConfig': 'MANUAL',
            security_groups: [{ name: 'default' }],
          },
        });
      }),
    ),
  ];
}
