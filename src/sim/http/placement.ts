// Placement: resource providers, inventories (PUT with generations and 409 on conflict),
// usages, traits, aggregates and allocations, with Placement's microversions and error bodies.
import type { SimCloud } from '../model.js';
import type { InventoryRecord, ResourceProvider } from '../placement-state.js';
import { atLeast, fmt, PLACEMENT_VERSIONS, requestedVersion, type Version } from './microversion.js';
import { type Ctx, isRecord, type Route, route, sendEmpty, sendJson } from './respond.js';

export const PLACEMENT_PREFIX = '/placement';

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  404: 'Not Found',
  405: 'Method Not Allowed',
  406: 'Not Acceptable',
  409: 'Conflict',
};

const PREAMBLES: Record<number, string> = {
  400: 'The server could not comply with the request since it is either malformed or otherwise incorrect.',
  404: 'The resource could not be found.',
  409: 'There was a conflict when trying to complete your request.',
};

export function placementError(
  ctx: Ctx,
  status: number,
  detail: string,
  version: Version | null,
  code = 'placement.undefined_code',
  extra: Record<string, unknown> = {},
): void {
  const err: Record<string, unknown> = {
    status,
    title: TITLES[status] ?? 'Error',
    detail: `${PREAMBLES[status] ?? ''}\n\n ${detail}  `,
    request_id: ctx.requestId,
    ...extra,
  };
  if (version && atLeast(version, 1, 23)) err.code = code;
  sendJson(ctx, status, { errors: [err] });
}

class PlacementFault extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
    readonly code = 'placement.undefined_code',
  ) {
    super(detail);
  }
}

type PHandler = (ctx: Ctx, v: Version, params: string[]) => void;

export function placementRoutes(cloud: SimCloud): Route[] {
  const p = cloud.placement;
  const wrap =
    (h: PHandler) =>
    (ctx: Ctx, params: string[]): void => {
      const neg = requestedVersion(
        PLACEMENT_VERSIONS,
        'placement',
        ctx.req.headers['openstack-api-version'] as string | undefined,
        undefined,
      );
      if (!neg.ok) {
        const raw =
          (ctx.req.headers['openstack-api-version'] as string | undefined)?.replace(/^placement\s+/i, '') ??
          '';
        if (neg.status === 406) {
          placementError(ctx, 406, '', null, undefined, {
            detail: `The resource could not be generated that was acceptable to your browser (content of type application/json. \n\n Invalid microversion: Unacceptable version header: ${raw}`,
            max_version: fmt(PLACEMENT_VERSIONS.max),
            min_version: fmt(PLACEMENT_VERSIONS.min),
          });
          return;
        }
        placementError(ctx, 400, `invalid version string: ${raw}`, null);
        return;
      }
      Object.assign(ctx.headers, {
        'openstack-api-version': `placement ${fmt(neg.version)}`,
        vary: 'openstack-api-version',
      });
      cloud.sync();
      try {
        h(ctx, neg.version, params);
      } catch (e) {
        if (!(e instanceof PlacementFault)) throw e;
        placementError(ctx, e.status, e.detail, neg.version, e.code);
      }
    };

  const rpOr404 = (uuid: string): ResourceProvider => {
    const rp = p.providers.get(uuid);
    if (!rp)
      throw new PlacementFault(
        404,
        `No resource provider with uuid ${uuid} found : No resource provider with uuid ${uuid} found`,
      );
    return rp;
  };

  const rpView = (v: Version, rp: ResourceProvider): Record<string, unknown> => {
    const base = `/resource_providers/${rp.uuid}`;
    const links = [
      { rel: 'self', href: base },
      { rel: 'inventories', href: `${base}/inventories` },
      { rel: 'usages', href: `${base}/usages` },
    ];
    if (atLeast(v, 1, 1)) links.push({ rel: 'aggregates', href: `${base}/aggregates` });
    if (atLeast(v, 1, 6)) links.push({ rel: 'traits', href: `${base}/traits` });
    if (atLeast(v, 1, 11)) links.push({ rel: 'allocations', href: `${base}/allocations` });
    const out: Record<string, unknown> = { uuid: rp.uuid, name: rp.name, generation: rp.generation, links };
    if (atLeast(v, 1, 14)) {
      out.parent_provider_uuid = null;
      out.root_provider_uuid = rp.uuid;
    }
    return out;
  };

  const invView = (inv: InventoryRecord): Record<string, number> => ({
    total: inv.total,
    reserved: inv.reserved,
    min_unit: inv.min_unit,
    max_unit: inv.max_unit,
    step_size: inv.step_size,
    allocation_ratio: inv.allocation_ratio,
  });

  return [
    route('GET', '', (ctx) => {
      sendJson(
        ctx,
        200,
        {
          versions: [
            {
              id: 'v1.0',
              max_version: fmt(PLACEMENT_VERSIONS.max),
              min_version: fmt(PLACEMENT_VERSIONS.min),
              status: 'CURRENT',
              links: [{ rel: 'self', href: '' }],
            },
          ],
        },
        { 'openstack-api-version': 'placement 1.0', vary: 'openstack-api-version' },
      );
    }),
    route(
      'GET',
      '/resource_providers',
      wrap((ctx, v) => {
        const q = ctx.query;
        const name = q.get('name');
        const uuid = q.get('uuid');
        const inTree = atLeast(v, 1, 14) ? q.get('in_tree') : null;
        const memberOf = atLeast(v, 1, 3) ? q.getAll('member_of') : [];
        const required = atLeast(v, 1, 18) ? q.get('required') : null;
        let list: ResourceProvider[];
        if (uuid !== null || inTree !== null) {
          const rp = p.providers.get((uuid ?? inTree) as string);
          list = rp ? [rp] : [];
        } else if (name !== null) {
          const rp = p.providersByName.get(name);
          list = rp ? [rp] : [];
        } else {
          list = [...p.providers.values()];
        }
        for (const m of memberOf) {
          const any = m.replace(/^in:/, '').split(',');
          list = list.filter((rp) => any.some((a) => rp.aggregates.has(a)));
        }
        if (required) {
          const traits = required.split(',');
          const unknown = traits.map((t) => t.replace(/^!/, '')).filter((t) => !p.traitExists(t));
          if (unknown.length) throw new PlacementFault(400, `No such trait(s): ${unknown.join(', ')}`);
          list = list.filter((rp) =>
            traits.every((t) => (t.startsWith('!') ? !rp.traits.has(t.slice(1)) : rp.traits.has(t))),
          );
        }
        sendJson(ctx, 200, { resource_providers: list.map((rp) => rpView(v, rp)) });
      }),
    ),
    route(
      'GET',
      '/resource_providers/{uuid}',
      wrap((ctx, v, [uuid]) => sendJson(ctx, 200, rpView(v, rpOr404(uuid as string)))),
    ),
    route(
      'GET',
      '/resource_providers/{uuid}/inventories',
      wrap((ctx, _v, [uuid]) => {
        const rp = rpOr404(uuid as string);
        const inventories: Record<string, unknown> = {};
        for (const [rc, inv] of rp.inventories) inventories[rc] = invView(inv);
        sendJson(ctx, 200, { resource_provider_generation: rp.generation, inventories });
      }),
    ),
    route(
      'GET',
      '/resource_providers/{uuid}/inventories/{rc}',
      wrap((ctx, _v, [uuid, rc]) => {
        const rp = rpOr404(uuid as string);
        const inv = rp.inventories.get(rc as string);
        if (!inv) throw new PlacementFault(404, `No inventory of class ${rc} for ${uuid}`);
        sendJson(ctx, 200, { resource_provider_generation: rp.generation, ...invView(inv) });
      }),
    ),
    route(
      'PUT',
      '/resource_providers/{uuid}/inventories',
      wrap((ctx, _v, [uuid]) => {
        const rp = rpOr404(uuid as string);
        const body = isRecord(ctx.body) ? ctx.body : null;
        if (!body || typeof body.resource_provider_generation !== 'number' || !isRecord(body.inventories)) {
          throw new PlacementFault(
            400,
            `JSON does not validate: 'resource_provider_generation' and 'inventories' are required properties  On instance:     ${JSON.stringify(ctx.body)}`,
          );
        }
        const next = new Map<string, InventoryRecord>();
        for (const [rc, raw] of Object.entries(body.inventories)) next.set(rc, parseInventory(rc, raw));
        if (body.resource_provider_generation !== rp.generation) {
          throw new PlacementFault(
            409,
            'resource provider generation conflict',
            'placement.concurrent_update',
          );
        }
        for (const rc of rp.inventories.keys()) {
          if (!next.has(rc) && (rp.usage.get(rc) ?? 0) > 0) {
            throw new PlacementFault(
              409,
              `update conflict: Inventory for '${rc}' on resource provider '${rp.uuid}' in use.`,
              'placement.inventory.inuse',
            );
          }
        }
        rp.inventories.clear();
        for (const [rc, inv] of next) rp.inventories.set(rc, inv);
        rp.generation++;
        const inventories: Record<string, unknown> = {};
        for (const [rc, inv] of rp.inventories) inventories[rc] = invView(inv);
        sendJson(ctx, 200, { resource_provider_generation: rp.generation, inventories });
      }),
    ),
    route(
      'PUT',
      '/resource_providers/{uuid}/inventories/{rc}',
      wrap((ctx, _v, [uuid, rc]) => {
        const rp = rpOr404(uuid as string);
        const body = isRecord(ctx.body) ? ctx.body : null;
        if (!body || typeof body.resource_provider_generation !== 'number') {
          throw new PlacementFault(
            400,
            `JSON does not validate: 'resource_provider_generation' is a required property`,
          );
        }
        const { resource_provider_generation: gen, ...fields } = body;
        const inv = parseInventory(rc as string, fields);
        if (gen !== rp.generation) {
          throw new PlacementFault(
            409,
            'resource provider generation conflict',
            'placement.concurrent_update',
          );
        }
        rp.inventories.set(rc as string, inv);
        rp.generation++;
        sendJson(ctx, 200, { resource_provider_generation: rp.generation, ...invView(inv) });
      }),
    ),
    route(
      'GET',
      '/resource_providers/{uuid}/usages',
      wrap((ctx, _v, [uuid]) => {
        const rp = rpOr404(uuid as string);
        const usages: Record<string, number> = {};
        for (const rc of rp.inventories.keys()) usages[rc] = rp.usage.get(rc) ?? 0;
        sendJson(ctx, 200, { resource_provider_generation: rp.generation, usages });
      }),
    ),
    route(
      'GET',
      '/resource_providers/{uuid}/traits',
      wrap((ctx, v, [uuid]) => {
        if (!atLeast(v, 1, 6)) throw new PlacementFault(404, 'The resource could not be found.');
        const rp = rpOr404(uuid as string);
        sendJson(ctx, 200, { traits: [...rp.traits], resource_provider_generation: rp.generation });
      }),
    ),
    route(
      'PUT',
      '/resource_providers/{uuid}/traits',
      wrap((ctx, v, [uuid]) => {
        if (!atLeast(v, 1, 6)) throw new PlacementFault(404, 'The resource could not be found.');
        const rp = rpOr404(uuid as string);
        const body = isRecord(ctx.body) ? ctx.body : null;
        const traits = body && Array.isArray(body.traits) ? body.traits : null;
        if (!body || typeof body.resource_provider_generation !== 'number' || !traits) {
          throw new PlacementFault(
            400,
            `JSON does not validate: 'resource_provider_generation' and 'traits' are required properties  On instance:     ${JSON.stringify(ctx.body)}`,
          );
        }
        const names = traits.filter((t): t is string => typeof t === 'string');
        const unknown = names.filter((t) => !p.traitExists(t));
        if (unknown.length) throw new PlacementFault(400, `No such trait(s): ${unknown.join(', ')}`);
        if (body.resource_provider_generation !== rp.generation) {
          throw new PlacementFault(
            409,
            'resource provider generation conflict',
            'placement.concurrent_update',
          );
        }
        rp.traits = new Set(names);
        rp.generation++;
        sendJson(ctx, 200, { traits: [...rp.traits], resource_provider_generation: rp.generation });
      }),
    ),
    route(
      'GET',
      '/traits/{name}',
      wrap((ctx, v, [name]) => {
        if (!atLeast(v, 1, 6)) throw new PlacementFault(404, 'The resource could not be found.');
        if (!p.traitExists(name as string)) throw new PlacementFault(404, `No such trait(s): ${name}.`);
        sendEmpty(ctx, 204);
      }),
    ),
    route(
      'PUT',
      '/traits/{name}',
      wrap((ctx, v, [name]) => {
        if (!atLeast(v, 1, 6)) throw new PlacementFault(404, 'The resource could not be found.');
        const n = name as string;
        if (!/^CUSTOM_[A-Z0-9_]+$/.test(n)) {
          throw new PlacementFault(
            400,
            `The trait is invalid. A valid trait must be no longer than 255 characters, start with the prefix "CUSTOM_" and use following characters: "A"-"Z", "0"-"9" and "_"`,
          );
        }
        const created = !p.customTraits.has(n);
        p.customTraits.add(n);
        ctx.headers.location = `/traits/${n}`;
        sendEmpty(ctx, created ? 201 : 204);
      }),
    ),
    route(
      'DELETE',
      '/traits/{name}',
      wrap((ctx, v, [name]) => {
        if (!atLeast(v, 1, 6)) throw new PlacementFault(404, 'The resource could not be found.');
        const n = name as string;
        if (!n.startsWith('CUSTOM_')) throw new PlacementFault(400, `Cannot delete standard trait ${n}.`);
        if (!p.customTraits.has(n)) throw new PlacementFault(404, `No such trait(s): ${n}`);
        if ([...p.providers.values()].some((rp) => rp.traits.has(n))) {
          throw new PlacementFault(409, `The trait ${n} is in use by a resource provider.`);
        }
        p.customTraits.delete(n);
        sendEmpty(ctx, 204);
      }),
    ),
    route(
      'GET',
      '/resource_providers/{uuid}/aggregates',
      wrap((ctx, v, [uuid]) => {
        if (!atLeast(v, 1, 1)) throw new PlacementFault(404, 'The resource could not be found.');
        const rp = rpOr404(uuid as string);
        const body: Record<string, unknown> = { aggregates: [...rp.aggregates] };
        if (atLeast(v, 1, 19)) body.resource_provider_generation = rp.generation;
        sendJson(ctx, 200, body);
      }),
    ),
    route(
      'GET',
      '/resource_providers/{uuid}/allocations',
      wrap((ctx, v, [uuid]) => {
        const rp = rpOr404(uuid as string);
        const allocations: Record<string, unknown> = {};
        for (const c of rp.consumers) {
          const consumer = p.consumers.get(c);
          const a = consumer?.allocations.get(rp.uuid);
          if (!consumer || !a) continue;
          const entry: Record<string, unknown> = { resources: Object.fromEntries(a) };
          if (atLeast(v, 1, 28)) entry.consumer_generation = consumer.generation;
          allocations[c] = entry;
        }
        sendJson(ctx, 200, { allocations, resource_provider_generation: rp.generation });
      }),
    ),
    route(
      'GET',
      '/allocations/{consumer}',
      wrap((ctx, v, [consumer]) => {
        const c = p.consumers.get(consumer as string);
        const allocations: Record<string, unknown> = {};
        if (c) {
          for (const [rpUuid, a] of c.allocations) {
            allocations[rpUuid] = {
              generation: p.providers.get(rpUuid)?.generation ?? 0,
              resources: Object.fromEntries(a),
            };
          }
        }
        const body: Record<string, unknown> = { allocations };
        if (c && atLeast(v, 1, 12)) {
          body.project_id = c.projectId;
          body.user_id = c.userId;
        }
        if (c && atLeast(v, 1, 28)) body.consumer_generation = c.generation;
        // Nova (26) writes no consumer type, so Placement reports every consumer as unknown.
        if (c && atLeast(v, 1, 38)) body.consumer_type = 'unknown';
        sendJson(ctx, 200, body);
      }),
    ),
  ];
}

function parseInventory(rc: string, raw: unknown): InventoryRecord {
  if (!/^[A-Z0-9_]+$/.test(rc))
    throw new PlacementFault(
      400,
      `JSON does not validate: '${rc}' does not match any of the regexes: '^[A-Z0-9_]+$'`,
    );
  if (!isRecord(raw) || typeof raw.total !== 'number' || !Number.isInteger(raw.total) || raw.total < 1) {
    throw new PlacementFault(
      400,
      `JSON does not validate: 'total' is a required property (a positive integer) in inventories.${rc}`,
    );
  }
  const int = (k: string, d: number, min: number): number => {
    const x = raw[k];
    if (x === undefined) return d;
    if (typeof x !== 'number' || !Number.isInteger(x) || x < min) {
      throw new PlacementFault(
        400,
        `JSON does not validate: ${JSON.stringify(x)} is not valid under the schema of inventories.${rc}.${k}`,
      );
    }
    return x;
  };
  const ratio = raw.allocation_ratio ?? 1.0;
  if (typeof ratio !== 'number' || !(ratio > 0)) {
    throw new PlacementFault(
      400,
      `JSON does not validate: ${JSON.stringify(ratio)} is not of type 'number' in inventories.${rc}.allocation_ratio`,
    );
  }
  const inv: InventoryRecord = {
    total: raw.total,
    reserved: int('reserved', 0, 0),
    min_unit: int('min_unit', 1, 1),
    max_unit: int('max_unit', raw.total, 1),
    step_size: int('step_size', 1, 1),
    allocation_ratio: ratio,
  };
  if (inv.reserved > inv.total) {
    throw new PlacementFault(
      400,
      `Unable to update inventory for resource provider: Invalid inventory for '${rc}'. The reserved value is greater than total.`,
    );
  }
  return inv;
}
