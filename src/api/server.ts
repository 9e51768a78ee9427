// The REST API: buildApi() assembles it on the store, the configuration, the service's control
// port and the Keystone validator; listenApi() binds it (the no-auth mode to loopback only).
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import fastifySwagger from '@fastify/swagger';
import Fastify, { type FastifyBaseLogger, LogController } from 'fastify';
import {
  jsonSchemaTransform,
  jsonSchemaTransformObject,
  serializerCompiler,
  validatorCompiler,
  type ZodTypeProvider,
} from 'fastify-type-provider-zod';
import type { ServiceConfig } from '../config/types.js';
import type { ReplicaDirectory } from '../coordination/ownership.js';
import type { MaintenanceService } from '../maintenance/service.js';
import type { Store } from '../store/store.js';
import type { TaskService } from '../tasks/service.js';
import { isLoopback } from '../util/loopback.js';
import type { ApiContext, ZodApp } from './context.js';
import type { ServiceControl } from './control.js';
import { ApiError, errorBody, sendError, toApiError } from './errors.js';
import { allowedHostNames, checkHost, checkStateChange, SECURITY_HEADERS } from './guard.js';
import { parseJsonBody } from './json-body.js';
import type { Caller, TokenValidator } from './keystone.js';
import { type ApiLogger, createApiLogger, pathForLog } from './logger.js';
import type { ApiMetrics } from './metrics.js';
import { type ApiPolicy, allows, DEFAULT_API_POLICY } from './policy.js';
import { registerAggregates } from './routes/aggregates.js';
import { registerAuth } from './routes/auth.js';
import { registerExecutions } from './routes/executions.js';
import { registerInsight } from './routes/insight.js';
import { registerMaintenance } from './routes/maintenance.js';
import { API_VERSION, registerMeta } from './routes/meta.js';
import { registerPauses } from './routes/pauses.js';
import { registerPlans } from './routes/plans.js';
import { registerQuarantine } from './routes/quarantine.js';
import { registerRecords } from './routes/records.js';
import { registerReplicas } from './routes/replicas.js';
import { registerShadowReports } from './routes/shadow.js';
import { registerSnapshots } from './routes/snapshots.js';
import { registerTasks } from './routes/tasks.js';
import { defaultWebRoot, hasWebBuild, registerWeb } from './routes/web.js';
import { registerWhatIf } from './routes/what-if.js';
import type { SnapshotSource, TokenIssuer } from './sources.js';

export type ApiAuth =
  | { kind: 'keystone'; validator: TokenValidator; policy?: ApiPolicy }
  /** Everyone is admin: for the demo, and only ever bound to loopback (listenApi refuses otherwise). */
  | { kind: 'none' };

export interface ApiOptions {
  store: Store;
  config: ServiceConfig;
  control: ServiceControl;
  auth: ApiAuth;
  /** The running service's snapshots (host figures, charts, what-if, record now); absent: those answer 503. */
  snapshots?: SnapshotSource;
  /** Where POST /v1/auth/tokens forwards logins (keystone mode); absent: no login endpoint. */
  login?: TokenIssuer;
  /** Where recorded snapshots are written (default: the configuration's stateDir/snapshots). */
  snapshotDir?: string;
  logger?: ApiLogger;
  metrics?: ApiMetrics;
  now?: () => Date;
  /** Operator tasks of the service in this process. */
  tasks?: TaskService;
  /** Maintenance campaigns of the service in this process. */
  maintenance?: MaintenanceService;
  /** Replicas: the ownership of this replica (GET /v1/replicas, owners in /v1/aggregates, metrics). */
  replicas?: ReplicaDirectory;
  /** Largest request body in bytes (default 64 KiB). */
  bodyLimit?: number;
  /** The built dashboard served at / (default: the package's dist/web when built; null: none). */
  webRoot?: string | null;
  /** The address the API will listen on, for the Host check (default: the configuration's api.host). */
  listenHost?: string;
}

const NO_AUTH_CALLER: Caller = {
  userId: 'local',
  userName: 'local',
  projectId: null,
  projectName: null,
  roles: ['admin'],
  system: false,
  credential: 'none (no-auth loopback mode)',
  expiresAt: '9999-12-31T23:59:59.000Z',
};

const TOKEN_FIELD = 'headers.x-auth-token';

export async function buildApi(opts: ApiOptions): Promise<ZodApp> {
  const logger = opts.logger ?? createApiLogger({ level: 'silent' });
  const app = Fastify({
    loggerInstance: logger as FastifyBaseLogger,
    // One line per request comes from the onResponse hook below, with the fields we choose.
    logController: new LogController({ disableRequestLogging: true }),
    genReqId: () => randomUUID(),
    bodyLimit: opts.bodyLimit ?? 64 * 1024,
    return503OnClosing: true,
    frameworkErrors: (err, req, reply) => {
      sendError(reply, toApiError(err, req));
    },
    // Requests Node's HTTP parser refuses before Fastify sees them (headers over its limit,
    // malformed HTTP) are answered in the API's error shape too.
    clientErrorHandler: (err, socket) => {
      const status = (err as { code?: string }).code === 'HPE_HEADER_OVERFLOW' ? 431 : 400;
      if (!socket.writable) return socket.destroy(err);
      const body = JSON.stringify(
        errorBody(
          status === 431
            ? new ApiError(431, 'headers-too-large', 'headers: larger than the server accepts', 'headers')
            : new ApiError(400, 'bad-request', 'request: not a valid HTTP request', 'request'),
          randomUUID(),
        ),
      );
      const head = Object.entries(SECURITY_HEADERS)
        .map(([k, v]) => `${k}: ${v}\r\n`)
        .join('');
      socket.end(
        `HTTP/1.1 ${status} ${status === 431 ? 'Request Header Fields Too Large' : 'Bad Request'}\r\nConnection: close\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${head}\r\n${body}`,
      );
    },
  }).withTypeProvider<ZodTypeProvider>();
  // Bodies are JSON only: Fastify's own text/plain parser would hand a string to the schema and
  // answer 400 where the media type is what is wrong (415).
  app.removeContentTypeParser('text/plain');
  // Ours reads UTF-8 strictly (415 otherwise) and names a prototype key where it is.
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_req, body, done) => {
    try {
      done(null, parseJsonBody(body as Buffer));
    } catch (e) {
      done(e as Error, undefined);
    }
  });
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  app.decorateRequest('caller', null);

  const auth = opts.auth;
  const policy = auth.kind === 'keystone' ? (auth.policy ?? DEFAULT_API_POLICY) : DEFAULT_API_POLICY;
  const ctx: ApiContext = {
    store: opts.store,
    config: opts.config,
    control: opts.control,
    now: opts.now ?? (() => new Date()),
    snapshots: opts.snapshots ?? null,
    login: auth.kind === 'keystone' ? (opts.login ?? null) : null,
    authMode: auth.kind,
    policy,
    snapshotDir: opts.snapshotDir ?? join(opts.config.stateDir, 'snapshots'),
    ...(opts.tasks !== undefined ? { tasks: opts.tasks } : {}),
    ...(opts.maintenance !== undefined ? { maintenance: opts.maintenance } : {}),
    ...(opts.replicas !== undefined ? { replicas: opts.replicas } : {}),
  };

  const hosts = allowedHostNames(opts.listenHost ?? opts.config.api.host, opts.config.api.allowedHosts);

  app.addHook('onRequest', async (req, reply) => {
    reply.header('X-Request-Id', req.id);
    reply.headers(SECURITY_HEADERS);
    checkHost(req.headers.host, hosts);
    checkStateChange(req.method, req.headers);
    const charset = /charset\s*=\s*"?([^";\s]+)/i.exec(req.headers['content-type'] ?? '')?.[1]?.toLowerCase();
    if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8')
      throw new ApiError(
        415,
        'unsupported-media-type',
        'headers.content-type: JSON bodies are read as UTF-8 only',
        'headers.content-type',
      );
    const action = req.routeOptions.config?.action;
    const authOnly = req.routeOptions.config?.authOnly === true;
    if (action === undefined && !authOnly) return;
    if (auth.kind === 'none') {
      req.caller = NO_AUTH_CALLER;
      return;
    }
    const token = req.headers['x-auth-token'];
    if (typeof token !== 'string' || token === '')
      throw new ApiError(
        401,
        'unauthenticated',
        `${TOKEN_FIELD}: missing: send a Keystone token`,
        TOKEN_FIELD,
      );
    const caller = await auth.validator.validate(token);
    if (caller === null)
      throw new ApiError(
        401,
        'unauthenticated',
        `${TOKEN_FIELD}: Keystone does not accept this token (invalid, expired or revoked)`,
        TOKEN_FIELD,
      );
    if (action !== undefined && !allows(policy, action, caller))
      throw new ApiError(
        403,
        'forbidden',
        `${action} needs one of the roles ${policy[action].join(', ')}; the token of ${caller.userName} has ${caller.roles.join(', ') || 'none'}${caller.system ? ' (system scope)' : caller.projectName !== null ? ` in project ${caller.projectName}` : ''}`,
      );
    req.caller = caller;
  });

  app.addHook('onResponse', async (req, reply) => {
    const seconds = reply.elapsedTime / 1000;
    opts.metrics?.observeRequest(req.method, req.routeOptions.url ?? 'unmatched', reply.statusCode, seconds);
    req.log.info(
      {
        method: req.method,
        // A path no route matched may hold anything (a pasted token): only matched ones are logged.
        url: req.routeOptions.url === undefined ? null : pathForLog(req.url),
        route: req.routeOptions.url ?? null,
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime * 10) / 10,
        user: req.caller?.userName ?? null,
      },
      'request',
    );
  });

  app.setErrorHandler((err, req, reply) => {
    const e = toApiError(err, req);
    if (e.status >= 500) req.log.error({ err }, 'request failed');
    return sendError(reply, e);
  });
  app.setNotFoundHandler((req, reply) =>
    sendError(
      reply,
      new ApiError(404, 'not-found', `no endpoint ${req.method} ${pathForLog(req.url).split('?')[0]}`, 'url'),
    ),
  );

  await app.register(fastifySwagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Aicerine API',
        version: API_VERSION,
        description:
          'Plans, executions, quarantine, pauses and the audit log of an Aicerine service (docs/api.md).',
      },
      components: {
        securitySchemes: { keystone: { type: 'apiKey', in: 'header', name: 'X-Auth-Token' } },
      },
      security: [{ keystone: [] }],
    },
    transform: jsonSchemaTransform,
    transformObject: jsonSchemaTransformObject,
  });

  registerMeta(app, ctx);
  registerAggregates(app, ctx);
  registerPlans(app, ctx);
  registerExecutions(app, ctx);
  registerQuarantine(app, ctx);
  registerPauses(app, ctx);
  registerRecords(app, ctx);
  registerInsight(app, ctx);
  registerSnapshots(app, ctx);
  registerShadowReports(app, ctx);
  registerWhatIf(app, ctx);
  registerAuth(app, ctx);
  registerTasks(app, ctx);
  registerMaintenance(app, ctx);
  registerReplicas(app, ctx);
  if (opts.metrics !== undefined) opts.metrics.register(app, ctx);

  app.get('/v1/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  const webRoot = opts.webRoot === undefined ? defaultWebRoot() : opts.webRoot;
  if (hasWebBuild(webRoot)) registerWeb(app, webRoot);
  return app;
}

export interface ListenOptions {
  host: string;
  port: number;
  /** The API was built with auth none: refused unless host is a loopback address. */
  noAuth: boolean;
}

export { isLoopback };

/** Binds the API; returns its URL. */
export async function listenApi(app: ZodApp, opts: ListenOptions): Promise<string> {
  if (opts.noAuth) {
    if (!isLoopback(opts.host))
      throw new Error(
        `the API without authentication binds to loopback only (127.0.0.1, ::1, localhost), not ${opts.host}`,
      );
    app.log.warn(
      `NO AUTHENTICATION: the API on ${opts.host}:${opts.port} lets anyone on this machine approve plans, abort executions and pause the service; for demos only`,
    );
  }
  return app.listen({ host: opts.host, port: opts.port });
}
