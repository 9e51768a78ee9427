// A minimal Glance v2 (one image, read-only): the openstack CLI resolves image names when it
// lists servers and refuses to list them when the catalog has no image service.
import { stableUuid } from '../ids.js';
import { type Route, route, sendJson } from './respond.js';

export const GLANCE_PREFIX = '/image';
export const SIM_IMAGE_ID = stableUuid('image', 'sim-image');

function imageView(): Record<string, unknown> {
  return {
    id: SIM_IMAGE_ID,
    name: 'sim-image',
    status: 'active',
    visibility: 'public',
    protected: false,
    os_hidden: false,
    disk_format: 'raw',
    container_format: 'bare',
    size: 1024,
    min_disk: 0,
    min_ram: 0,
    checksum: null,
    owner: null,
    tags: [],
    created_at: '2026-01-01T00:00:00Z',
    updated_at: '2026-01-01T00:00:00Z',
    self: `/v2/images/${SIM_IMAGE_ID}`,
    file: `/v2/images/${SIM_IMAGE_ID}/file`,
    schema: '/v2/schemas/image',
  };
}

export function glanceRoutes(): Route[] {
  return [
    route('GET', '', (ctx) =>
      sendJson(ctx, 300, {
        versions: [
          {
            id: 'v2.16',
            status: 'CURRENT',
            links: [{ rel: 'self', href: `${ctx.origin}${GLANCE_PREFIX}/v2/` }],
          },
        ],
      }),
    ),
    route('GET', '/v2/images', (ctx) => {
      const id = ctx.query.get('id');
      const name = ctx.query.get('name');
      const owner = ctx.query.get('owner');
      const match =
        (id === null || id === SIM_IMAGE_ID || id === `in:${SIM_IMAGE_ID}`) &&
        (name === null || name === 'sim-image') &&
        owner === null;
      sendJson(ctx, 200, {
        images: match ? [imageView()] : [],
        first: '/v2/images',
        schema: '/v2/schemas/images',
      });
    }),
    route('GET', '/v2/images/{id}', (ctx, [id]) => {
      if (id !== SIM_IMAGE_ID) {
        ctx.res.writeHead(404, { 'Content-Type': 'text/plain' });
        ctx.res.end(`No image found with ID ${id}`);
        return;
      }
      sendJson(ctx, 200, imageView());
    }),
  ];
}
