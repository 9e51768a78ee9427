// Endpoint lookup in a Keystone v3 service catalog.
import { CloudError } from '../errors.js';
import type { EndpointInterface } from './config.js';

export interface CatalogEndpoint {
  interface: string;
  region?: string;
  region_id?: string;
  url: string;
}

export interface CatalogService {
  type: string;
  name?: string;
  endpoints: CatalogEndpoint[];
}

export function parseCatalog(raw: unknown): CatalogService[] {
  if (!Array.isArray(raw)) return [];
  const out: CatalogService[] = [];
  for (const s of raw) {
    if (s === null || typeof s !== 'object') continue;
    const svc = s as Record<string, unknown>;
    if (typeof svc.type !== 'string' || !Array.isArray(svc.endpoints)) continue;
    const endpoints: CatalogEndpoint[] = [];
    for (const e of svc.endpoints) {
      if (e === null || typeof e !== 'object') continue;
      const ep = e as Record<string, unknown>;
      if (typeof ep.url !== 'string' || typeof ep.interface !== 'string') continue;
      const item: CatalogEndpoint = { interface: ep.interface, url: ep.url };
      if (typeof ep.region === 'string') item.region = ep.region;
      if (typeof ep.region_id === 'string') item.region_id = ep.region_id;
      endpoints.push(item);
    }
    out.push({ type: svc.type, ...(typeof svc.name === 'string' ? { name: svc.name } : {}), endpoints });
  }
  return out;
}

/** The endpoint URL (no trailing slash) of a service type in a region, for an interface. */
export function findEndpoint(
  catalog: CatalogService[],
  serviceType: string,
  iface: EndpointInterface,
  region: string | undefined,
): string {
  const services = catalog.filter((s) => s.type === serviceType);
  const fix = `Register the ${serviceType} service in Keystone (openstack endpoint create ${serviceType} ${iface} URL${region ? ` --region ${region}` : ''}), or choose another OS_REGION_NAME / OS_INTERFACE`;
  if (services.length === 0) {
    const known = [...new Set(catalog.map((s) => s.type))].sort().join(', ') || 'none';
    throw new CloudError(
      'catalog',
      `the Keystone catalog has no "${serviceType}" service (it has: ${known})`,
      {
        fix,
      },
    );
  }
  const all = services.flatMap((s) => s.endpoints);
  const match = all.find(
    (e) => e.interface === iface && (region === undefined || e.region === region || e.region_id === region),
  );
  if (!match) {
    const have = all.map((e) => `${e.interface}@${e.region ?? e.region_id ?? '?'}`).join(', ');
    throw new CloudError(
      'catalog',
      `the Keystone catalog has no ${iface} "${serviceType}" endpoint${region ? ` in region ${region}` : ''} (it has: ${have || 'none'})`,
      { fix },
    );
  }
  return match.url.replace(/\/+$/, '');
}
