// What every route handler gets: the store, the configuration, the service's control port, the
// clock, and who is calling.
import type { FastifyBaseLogger, FastifyRequest } from 'fastify';
import type { ServiceConfig } from '../config/types.js';
import type { ReplicaDirectory } from '../coordination/ownership.js';
import type { MaintenanceService } from '../maintenance/service.js';
import type { Store } from '../store/store.js';
import type { TaskService } from '../tasks/service.js';
import type { ServiceControl } from './control.js';
import type { Caller } from './keystone.js';
import type { ApiAction, ApiPolicy } from './policy.js';
import type { SnapshotSource, TokenIssuer } from './sources.js';

export interface ApiContext {
  store: Store;
  config: ServiceConfig;
  control: ServiceControl;
  now: () => Date;
  /** null: the API runs without the loop in-process; host lists, charts and what-if answer 503. */
  snapshots: SnapshotSource | null;
  /** null: no login endpoint (the no-auth mode, or no Keystone to forward to). */
  login: TokenIssuer | null;
  /** 'none': the loopback no-auth mode. */
  authMode: 'keystone' | 'none';
  policy: ApiPolicy;
  /** Where recorded snapshot files are written (stateDir/snapshots). */
  snapshotDir: string;
  /** Operator tasks, when the service runs in this process (absent: /v1/tasks answers 503). */
  tasks?: TaskService;
  /** Maintenance campaigns, when the service runs in this process (absent: /v1/maintenance answers 503). */
  maintenance?: MaintenanceService;
  /** Replicas: who owns what (absent: one process owns every aggregate). */
  replicas?: ReplicaDirectory;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The policy action a route needs; absent: open (health, version, OpenAPI, metrics). */
    action?: ApiAction;
    /** Any valid token will do (no policy check): whoami. */
    authOnly?: boolean;
  }
  interface FastifyRequest {
    caller: Caller | null;
  }
}

/** The audit log's actor and credential for the request's caller. */
export function actorOf(request: FastifyRequest): { actor: string; credential: string } {
  const c = request.caller;
  if (c === null) throw new Error('an action reached its handler without a caller');
  return { actor: `operator:${c.userName}`, credential: c.credential };
}

export type Log = FastifyBaseLogger;

import type {
  FastifyInstance,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
} from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';

export type ZodApp = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  ZodTypeProvider
>;
