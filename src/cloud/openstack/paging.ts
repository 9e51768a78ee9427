// Walks paginated OpenStack list endpoints: limit/marker with `<key>_links` "next" (Nova
// servers, flavors, hypervisors, migrations; Neutron), or limit/offset (Nova server groups).
import { CloudError } from '../errors.js';
import type { Query } from '../http/service-client.js';

/** Fetches one page: GET path?query, the parsed body. */
export type PageGetter = (path: string, query: Query) => Promise<unknown>;

export const DEFAULT_PAGE_SIZE = 500;

function nextMarker(body: Record<string, unknown>, key: string): string | undefined {
  const links = body[`${key}_links`];
  if (!Array.isArray(links)) return undefined;
  for (const l of links) {
    if (l && typeof l === 'object' && (l as { rel?: unknown }).rel === 'next') {
      const href = String((l as { href?: unknown }).href ?? '');
      // Take only the marker: the link's host may be an internal name not reachable from here.
      const marker = new URL(href, 'http://x').searchParams.get('marker');
      if (marker) return marker;
    }
  }
  return undefined;
}

function itemsOf(body: unknown, key: string, path: string): unknown[] {
  const items = body && typeof body === 'object' ? (body as Record<string, unknown>)[key] : undefined;
  if (!Array.isArray(items)) throw new CloudError('protocol', `GET ${path}: the answer has no "${key}" list`);
  return items;
}

export async function listWithMarker(
  get: PageGetter,
  path: string,
  key: string,
  query: Query = {},
  pageSize = DEFAULT_PAGE_SIZE,
): Promise<unknown[]> {
  const out: unknown[] = [];
  const seen = new Set<string>();
  let marker: string | undefined;
  for (;;) {
    const body = await get(path, { ...query, limit: pageSize, ...(marker ? { marker } : {}) });
    out.push(...itemsOf(body, key, path));
    marker = nextMarker(body as Record<string, unknown>, key);
    if (!marker) return out;
    if (seen.has(marker))
      throw new CloudError('protocol', `GET ${path}: pagination repeats marker ${marker}`);
    seen.add(marker);
  }
}

export async function listWithOffset(
  get: PageGetter,
  path: string,
  key: string,
  query: Query = {},
  pageSize = DEFAULT_PAGE_SIZE,
): Promise<unknown[]> {
  const out: unknown[] = [];
  for (let offset = 0; ; offset += pageSize) {
    const items = itemsOf(await get(path, { ...query, limit: pageSize, offset }), key, path);
    out.push(...items);
    if (items.length < pageSize) return out;
  }
}
