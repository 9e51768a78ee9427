// A minimal Neutron v2.0, read-only ports: one SR-IOV (vnic_type direct) port per server the
// snapshot marks `sriov`, so a recording sees the same servers as unmovable.
import { stableUuid } from '../ids.js';
import type { SimCloud, SimServer } from '../model.js';
import { type Route, route, sendJson } from './respond.js';

export const NEUTRON_PREFIX = '/network';

export function neutronRoutes(cloud: SimCloud): Route[] {
  /** Ports deleted through the API (the others come and go with their servers). */
  const deleted = new Set<string>();
  const ports = (): { id: string; server: SimServer }[] =>
    cloud.servers
      .filter((s) => s.sriov)
      .map((s) => ({ id: stableUuid(cloud.seed, 'port', s.uuid), server: s }))
      .filter((p) => !deleted.has(p.id));
  return [
    route('GET', '', (ctx) =>
      sendJson(ctx, 200, {
        versions: [
          {
            id: 'v2.0',
            status: 'CURRENT',
            links: [{ href: `${ctx.origin}${NEUTRON_PREFIX}/v2.0/`, rel: 'self' }],
          },
        ],
      }),
    ),
    route('GET', '/v2.0/ports', (ctx) => {
      const q = ctx.query;
      const types = q.getAll('binding:vnic_type');
      const device = q.get('device_id');
      const project = q.get('project_id') ?? q.get('tenant_id');
      const fields = q.getAll('fields');
      const limit = q.has('limit') ? Number(q.get('limit')) : Infinity;
      let list = ports().filter(
        (p) =>
          (types.length === 0 || types.includes('direct')) &&
          (device === null || p.server.uuid === device) &&
          (project === null || p.server.projectId === project),
      );
      const marker = q.get('marker');
      if (marker !== null) {
        const i = list.findIndex((p) => p.id === marker);
        list = i < 0 ? [] : list.slice(i + 1);
      }
      const page = list.slice(0, limit);
      const view = (p: { id: string; server: SimServer }): Record<string, unknown> => {
        const full: Record<string, unknown> = {
          id: p.id,
          name: '',
          device_id: p.server.uuid,
          device_owner: 'compute:nova',
          'binding:vnic_type': 'direct',
          'binding:host_id': p.server.host,
          status: 'ACTIVE',
          project_id: p.server.projectId,
          tenant_id: p.server.projectId,
        };
        if (fields.length === 0) return full;
        return Object.fromEntries(Object.entries(full).filter(([k]) => fields.includes(k)));
      };
      const body: Record<string, unknown> = { ports: page.map(view) };
      const last = page.at(-1);
      if (Number.isFinite(limit) && page.length === limit && last) {
        const params = new URLSearchParams(q);
        params.set('marker', last.id);
        body.ports_links = [
          { rel: 'next', href: `${ctx.origin}${NEUTRON_PREFIX}/v2.0/ports?${params.toString()}` },
        ];
      }
      sendJson(ctx, 200, body);
    }),
    route('DELETE', '/v2.0/ports/{id}', (ctx, [id]) => {
      if (!ports().some((p) => p.id === id)) {
        sendJson(ctx, 404, {
          NeutronError: { type: 'PortNotFound', message: `Port ${id} could not be found.`, detail: '' },
        });
        return;
      }
      deleted.add(id as string);
      ctx.res.writeHead(204);
      ctx.res.end();
    }),
  ];
}
