// The simulator's HTTP front door on loopback: one port, one path prefix per service (like
// devstack), token checks and access-rule enforcement as keystonemiddleware does them, and
// injected faults before any service sees the request.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { FaultInjector } from '../faults.js';
import { requestId } from '../ids.js';
import { accessRuleAllows, KeystoneState } from '../keystone-state.js';
import type { SimCloud } from '../model.js';
import { CINDER_PREFIX, cinderFault, cinderRoutes } from './cinder.js';
import { CONTROL_PREFIX, controlRoutes } from './control.js';
import { GLANCE_PREFIX, glanceRoutes } from './glance.js';
import { type CatalogService, KEYSTONE_PREFIX, keystoneRoutes } from './keystone.js';
import { NEUTRON_PREFIX, neutronRoutes } from './neutron.js';
import { NOVA_PREFIX, novaFault, novaRoutes } from './nova.js';
import { PLACEMENT_PREFIX, placementError, placementRoutes } from './placement.js';
import { PROMETHEUS_PREFIX, prometheusRoutes } from './prometheus.js';
import { type Ctx, findRoute, type Route, readBody, sendJson } from './respond.js';

export interface SimServerOptions {
  cloud: SimCloud;
  /** Password of the users admin and demo. */
  password?: string;
  port?: number;
  /** Seed of the fault injector's coin. */
  faultSeed?: number;
  /** One line per request, for `aicerine sim --verbose`. */
  log?: (line: string) => void;
}

export interface SimServerHandle {
  url: string;
  port: number;
  authUrl: string;
  cloud: SimCloud;
  keystone: KeystoneState;
  faults: FaultInjector;
  close(): Promise<void>;
}

interface Service {
  prefix: string;
  /** Keystone service type for access rules; null: no token needed. */
  type: string | null;
  routes: Route[];
  /** Paths (service-relative) that need no token: version discovery. */
  open: Set<string>;
  notFound: (ctx: Ctx) => void;
  badBody: (ctx: Ctx) => void;
}

const UNAUTHENTICATED = 'The request you have made requires authentication.';

export async function startSimServer(options: SimServerOptions): Promise<SimServerHandle> {
  const { cloud } = options;
  const keystone = new KeystoneState(options.password ?? 'secret', cloud.projects);
  const faults = new FaultInjector(options.faultSeed ?? 1);
  // Keystone fills in `$(project_id)s` of an endpoint template with the token's project, as
  // devstack registers Cinder's; clients then send the project id in every Cinder path.
  const catalog = (origin: string, projectId: string): CatalogService[] => [
    { type: 'identity', name: 'keystone', url: `${origin}${KEYSTONE_PREFIX}/v3` },
    { type: 'compute', name: 'nova', url: `${origin}${NOVA_PREFIX}/v2.1` },
    { type: 'placement', name: 'placement', url: `${origin}${PLACEMENT_PREFIX}` },
    { type: 'image', name: 'glance', url: `${origin}${GLANCE_PREFIX}` },
    { type: 'network', name: 'neutron', url: `${origin}${NEUTRON_PREFIX}` },
    { type: 'block-storage', name: 'cinder', url: `${origin}${CINDER_PREFIX}/v3/${projectId}` },
    { type: 'volumev3', name: 'cinderv3', url: `${origin}${CINDER_PREFIX}/v3/${projectId}` },
  ];
  const htmlNotFound = (ctx: Ctx): void => {
    const body =
      '<html>\n <head>\n  <title>404 Not Found</title>\n </head>\n <body>\n  <h1>404 Not Found</h1>\n  The resource could not be found.<br /><br />\n\n\n\n </body>\n</html>';
    ctx.res.writeHead(404, {
      ...ctx.headers,
      'Content-Type': 'text/html; charset=UTF-8',
      'Content-Length': Buffer.byteLength(body),
    });
    ctx.res.end(body);
  };
  const services: Service[] = [
    {
      prefix: KEYSTONE_PREFIX,
      type: null,
      routes: keystoneRoutes(keystone, catalog),
      open: new Set(),
      notFound: (ctx) =>
        sendJson(ctx, 404, {
          error: { code: 404, message: 'The resource could not be found.', title: 'Not Found' },
        }),
      badBody: (ctx) =>
        sendJson(ctx, 400, {
          error: { code: 400, message: 'Malformed JSON in request body.', title: 'Bad Request' },
        }),
    },
    {
      prefix: NOVA_PREFIX,
      type: 'compute',
      routes: novaRoutes(cloud),
      open: new Set(['', '/', '/v2.1', '/v2.1/']),
      notFound: htmlNotFound,
      badBody: (ctx) => novaFault(ctx, 400, 'Malformed request body'),
    },
    {
      prefix: PLACEMENT_PREFIX,
      type: 'placement',
      routes: placementRoutes(cloud),
      open: new Set(['', '/']),
      notFound: (ctx) => placementError(ctx, 404, '', null),
      badBody: (ctx) => placementError(ctx, 400, 'Malformed JSON', null),
    },
    {
      prefix: GLANCE_PREFIX,
      type: 'image',
      routes: glanceRoutes(),
      open: new Set(['', '/']),
      notFound: htmlNotFound,
      badBody: (ctx) => sendJson(ctx, 400, { error: 'bad body' }),
    },
    {
      prefix: NEUTRON_PREFIX,
      type: 'network',
      routes: neutronRoutes(cloud),
      open: new Set(['', '/']),
      notFound: (ctx) =>
        sendJson(ctx, 404, {
          NeutronError: { type: 'HTTPNotFound', message: 'The resource could not be found.', detail: '' },
        }),
      badBody: (ctx) =>
        sendJson(ctx, 400, {
          NeutronError: { type: 'HTTPBadRequest', message: 'Malformed JSON', detail: '' },
        }),
    },
    {
      prefix: CINDER_PREFIX,
      type: 'block-storage',
      routes: cinderRoutes(cloud),
      open: new Set(['', '/', '/v3', '/v3/']),
      notFound: (ctx) => cinderFault(ctx, 404, 'The resource could not be found.'),
      badBody: (ctx) => cinderFault(ctx, 400, 'Malformed request body'),
    },
    {
      prefix: PROMETHEUS_PREFIX,
      type: null,
      routes: prometheusRoutes(cloud),
      open: new Set(),
      notFound: (ctx) => sendJson(ctx, 404, { status: 'error', errorType: 'not_found', error: 'not found' }),
      badBody: (ctx) => sendJson(ctx, 400, { status: 'error', errorType: 'bad_data', error: 'bad body' }),
    },
    {
      prefix: CONTROL_PREFIX,
      type: null,
      routes: controlRoutes(cloud, faults),
      open: new Set(),
      notFound: (ctx) => sendJson(ctx, 404, { error: `no control endpoint ${ctx.method} ${ctx.path}` }),
      badBody: (ctx) => sendJson(ctx, 400, { error: 'request body is not valid JSON' }),
    },
  ];

  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  let origin = '';

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const started = Date.now();
    const url = new URL(req.url ?? '/', origin);
    const method = req.method ?? 'GET';
    const svc = services.find((s) => url.pathname === s.prefix || url.pathname.startsWith(`${s.prefix}/`));
    const rid = requestId();
    const ctx: Ctx = {
      req,
      res,
      method,
      path: svc ? url.pathname.slice(svc.prefix.length).replace(/\/+$/, '') : url.pathname,
      query: url.searchParams,
      body: undefined,
      origin,
      requestId: rid,
      token: null,
      headers: { 'x-openstack-request-id': rid },
    };
    res.on('finish', () =>
      options.log?.(`${method} ${url.pathname}${url.search} ${res.statusCode} ${Date.now() - started}ms`),
    );
    if (!svc) {
      sendJson(ctx, 404, {
        error: `nothing served at ${url.pathname}; services: ${services.map((s) => s.prefix).join(', ')}`,
      });
      return;
    }
    if (svc.prefix !== CONTROL_PREFIX) {
      const fault = faults.decide(method, url.pathname);
      if (fault?.kind === 'timeout') {
        const t = setTimeout(() => {
          timers.delete(t);
          req.socket.destroy();
        }, fault.delayMs);
        timers.add(t);
        return;
      }
      if (fault?.kind === 'slow')
        await new Promise<void>((r) => {
          const t = setTimeout(() => {
            timers.delete(t);
            r();
          }, fault.delayMs);
          timers.add(t);
        });
      if (fault?.kind === 'error') {
        sendJson(ctx, fault.status, {
          error: {
            code: fault.status,
            message: `Injected fault ${fault.id} (${fault.pattern})`,
            title: fault.status === 409 ? 'Conflict' : 'Service Unavailable',
          },
        });
        return;
      }
    }
    const raw = await readBody(req);
    if (raw.length > 0) {
      const type = String(req.headers['content-type'] ?? '');
      if (type.includes('json') || (type === '' && /^\s*[[{]/.test(raw))) {
        try {
          ctx.body = JSON.parse(raw);
        } catch {
          return svc.badBody(ctx);
        }
      } else ctx.body = raw;
    }
    if (svc.type !== null && !svc.open.has(ctx.path)) {
      const token = keystone.validateFor(
        svc.type,
        req.headers['x-auth-token'] as string | undefined,
        Date.now(),
      );
      const rules = token?.appCredential?.accessRules ?? [];
      // keystonemiddleware matches rules against webob's request.path: the URL path including
      // where the service is mounted (here "/compute/v2.1/servers", in the lab "/v2.1/servers").
      const servicePath = url.pathname;
      const allowed =
        token !== null &&
        (rules.length === 0 ||
          rules.some((r) => accessRuleAllows(r, svc.type as string, method, servicePath)));
      if (!allowed) {
        sendJson(
          ctx,
          401,
          { error: { code: 401, title: 'Unauthorized', message: UNAUTHENTICATED } },
          {
            'WWW-Authenticate': `Keystone uri="${origin}${KEYSTONE_PREFIX}"`,
          },
        );
        return;
      }
      ctx.token = token;
    }
    const m = findRoute(svc.routes, method, ctx.path);
    if (m === null) return svc.notFound(ctx);
    if (m === 'methodMismatch') {
      sendJson(ctx, 405, {
        error: {
          code: 405,
          message: `Method ${method} is not allowed for ${ctx.path}`,
          title: 'Method Not Allowed',
        },
      });
      return;
    }
    await m.route.handler(ctx, m.params);
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((e: unknown) => {
      options.log?.(`internal error: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
      if (!res.headersSent) {
        res.writeHead(500, { 'Content-Type': 'application/json' });
        res.end(
          JSON.stringify({
            error: {
              code: 500,
              message: e instanceof Error ? e.message : String(e),
              title: 'Internal Server Error',
            },
          }),
        );
      } else res.destroy();
    });
  });
  server.keepAliveTimeout = 5000;
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : 0;
  origin = `http://127.0.0.1:${port}`;
  return {
    url: origin,
    port,
    authUrl: `${origin}${KEYSTONE_PREFIX}/v3`,
    cloud,
    keystone,
    faults,
    close: () =>
      new Promise<void>((resolve) => {
        for (const t of timers) clearTimeout(t);
        server.close(() => resolve());
        for (const s of sockets) s.destroy();
      }),
  };
}
