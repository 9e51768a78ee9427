// The validate-compute task kinds: `validate-compute` (requested with {hosts, keepEnabled?};
// its preflight checks every host and plans one task per host plus the batch clean-up) and
// `validate-compute-cleanup` (internal, runs after every host task of its batch has ended).
import type { InputIssue } from '../errors.js';
import { InputError } from '../errors.js';
import type { JsonObject, PlannedTask, PreflightContext, TaskContext, TaskHandler } from '../tasks/types.js';
import { requireTasksSession, TaskFailedError, TaskRequestError } from '../tasks/types.js';
import { type BatchCleanupResult, cleanUpBatch } from './cleanup.js';
import { ValidationCloud } from './cloud.js';
import { batchNames } from './names.js';
import type { ValidationSettings } from './settings.js';
import { type HostCheckpoint, type HostValidationResult, validateHost } from './validate-host.js';

export const VALIDATE_KIND = 'validate-compute';
export const VALIDATE_CLEANUP_KIND = 'validate-compute-cleanup';

export interface ValidateComputeArgs {
  hosts: string[];
  keepEnabled: boolean;
}

/** Nova host names: what a DNS label chain allows (letters, digits, dots, dashes, underscores). */
/** Issues about the service's configuration, not about the request (the API names no request field). */
const CONFIG = 'the service configuration';
const HOST_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,254}$/;

export function parseValidateArgs(raw: unknown): ValidateComputeArgs {
  const issues: InputIssue[] = [];
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) {
    throw new InputError([
      { path: '', message: 'expected a mapping with hosts and keepEnabled', value: raw },
    ]);
  }
  const r = raw as Record<string, unknown>;
  for (const k of Object.keys(r)) {
    if (k !== 'hosts' && k !== 'keepEnabled')
      issues.push({ path: k, message: 'unknown argument (hosts, keepEnabled)' });
  }
  const hosts: string[] = [];
  if (!Array.isArray(r.hosts) || r.hosts.length === 0) {
    issues.push({
      path: 'hosts',
      message: 'expected a non-empty list of compute host names',
      value: r.hosts,
    });
  } else {
    r.hosts.forEach((h, i) => {
      if (typeof h !== 'string' || !HOST_NAME.test(h)) {
        issues.push({
          path: `hosts[${i}]`,
          message: 'expected a compute host name (letters, digits, . _ -)',
          value: h,
        });
      } else if (hosts.includes(h)) {
        issues.push({ path: `hosts[${i}]`, message: 'listed twice', value: h });
      } else hosts.push(h);
    });
  }
  if (r.keepEnabled !== undefined && typeof r.keepEnabled !== 'boolean') {
    issues.push({ path: 'keepEnabled', message: 'expected true or false', value: r.keepEnabled });
  }
  if (issues.length) throw new InputError(issues);
  return { hosts, keepEnabled: r.keepEnabled === true };
}

function settingsOf(ctx: { config: { validation: ValidationSettings | null } }): ValidationSettings {
  const s = ctx.config.validation;
  if (!s) {
    throw new TaskRequestError(
      409,
      'validate-compute is not configured: add tasks.validation (image, flavor, network, ssh, check) to the configuration',
    );
  }
  return s;
}

/**
 * Every host is checked before anything is created: malformed → 400 (parse), unknown to Nova
 * → 404, nova-compute down or forced down, or another unfinished task on it → 409.
 */
export async function preflightValidation(
  args: ValidateComputeArgs,
  ctx: PreflightContext,
): Promise<PlannedTask[]> {
  const settings = settingsOf(ctx);
  const cloud = new ValidationCloud(requireTasksSession(ctx, 'validate-compute'));
  const unknown: InputIssue[] = [];
  const conflicts: InputIssue[] = [];
  const busy = new Map<string, string>();
  for (const t of await ctx.unfinished()) for (const h of t.hosts) busy.set(h, `${t.kind} task ${t.id}`);
  for (const [i, host] of args.hosts.entries()) {
    const path = `hosts[${i}]`;
    const svc = await cloud.service(host);
    if (!svc) unknown.push({ path, message: 'Nova has no nova-compute service on this host', value: host });
    else if (svc.state !== 'up' || svc.forcedDown)
      conflicts.push({
        path,
        message: `nova-compute is down${svc.forcedDown ? ' (forced down)' : ''}`,
        value: host,
      });
    else if (busy.has(host)) conflicts.push({ path, message: `held by ${busy.get(host)}`, value: host });
  }
  if (unknown.length)
    throw new TaskRequestError(404, 'unknown compute host(s); nothing was created', unknown);
  if (conflicts.length)
    throw new TaskRequestError(409, 'host(s) cannot be validated now; nothing was created', conflicts);
  const config: InputIssue[] = [];
  if (!(await cloud.flavorSize(settings.flavor)))
    config.push({
      file: CONFIG,
      path: 'tasks.validation.flavor',
      message: 'no such flavor',
      value: settings.flavor,
    });
  if (!(await cloud.imageId(settings.image)))
    config.push({
      file: CONFIG,
      path: 'tasks.validation.image',
      message: 'no such image',
      value: settings.image,
    });
  if (requireTasksSession(ctx, 'validate-compute').config.method === 'application-credential') {
    config.push({
      file: CONFIG,
      path: 'credentials.tasks',
      message:
        'an application credential cannot be scoped to the dedicated project of the canary; use a password credential',
    });
  }
  if (config.length)
    throw new TaskRequestError(
      409,
      'the validation configuration does not match the cloud; nothing was created',
      config,
    );
  return [
    ...args.hosts.map((host) => ({
      kind: VALIDATE_KIND,
      args: { hosts: [host], keepEnabled: args.keepEnabled },
      hosts: [host],
    })),
    { kind: VALIDATE_CLEANUP_KIND, args: {}, hosts: [], afterBatch: true },
  ];
}

export interface ValidationHandlerOptions {
  /** Between status reads and SSH attempts (tests shorten it). */
  pollMs?: number;
}

/** validate-compute: one host per task (the preflight splits a request). */
export function validateComputeHandler(
  opts: ValidationHandlerOptions = {},
): TaskHandler<ValidateComputeArgs, HostCheckpoint> {
  return {
    kind: VALIDATE_KIND,
    description:
      'boot a canary onto disabled compute hosts, run the configured check over SSH, enable the hosts that pass (keepEnabled)',
    parse: parseValidateArgs,
    preflight: preflightValidation,
    async run(ctx: TaskContext<ValidateComputeArgs, HostCheckpoint>) {
      const [host, ...more] = ctx.args.hosts;
      if (!host || more.length) {
        throw new TaskFailedError(
          `a validate-compute task validates one host; this one lists ${ctx.args.hosts.length}`,
        );
      }
      const result: HostValidationResult = await validateHost(
        {
          cloud: new ValidationCloud(requireTasksSession(ctx, 'validate-compute')),
          settings: settingsOf(ctx),
          now: () => ctx.clock.now(),
          sleep: (ms) => ctx.clock.sleep(ms),
          ...(opts.pollMs === undefined ? {} : { pollMs: opts.pollMs }),
          signal: ctx.signal,
          progress: (detail) => ctx.progress({ done: 0, total: 1, detail }),
          checkpoint: ctx.checkpoint,
        },
        { batch: ctx.task.batch, host, keepEnabled: ctx.args.keepEnabled },
      );
      await ctx.audit.record(result.passed ? 'validate.passed' : 'validate.failed', `host/${host}`, {
        reason: result.reason,
        serviceStatus: result.serviceStatus,
      });
      const json = JSON.parse(JSON.stringify(result)) as JsonObject;
      if (!result.passed) throw new TaskFailedError(`${host} failed its validation: ${result.reason}`, json);
      return json;
    },
  };
}

/** validate-compute-cleanup: removes the batch's project, flavor, aggregate and trait. */
export function validateComputeCleanupHandler(
  opts: ValidationHandlerOptions = {},
): TaskHandler<JsonObject, null> {
  return {
    kind: VALIDATE_CLEANUP_KIND,
    description: "remove a validation batch's project (with its servers), flavor, aggregate and trait",
    internal: true,
    parse: (raw) => {
      if (raw && typeof raw === 'object' && !Array.isArray(raw) && Object.keys(raw).length === 0) return {};
      throw new InputError([{ path: '', message: 'expected no arguments', value: raw }]);
    },
    preflight: async () => [{ kind: VALIDATE_CLEANUP_KIND, args: {}, hosts: [], afterBatch: true }],
    async run(ctx) {
      const s = settingsOf(ctx);
      await ctx.progress({
        done: 0,
        total: 1,
        detail: 'removing the batch project, flavor, aggregate and trait',
      });
      const result: BatchCleanupResult = await cleanUpBatch(
        {
          cloud: new ValidationCloud(requireTasksSession(ctx, 'validate-compute')),
          now: () => ctx.clock.now(),
          sleep: (ms) => ctx.clock.sleep(ms),
          ...(opts.pollMs === undefined ? {} : { pollMs: opts.pollMs }),
          timeoutMs: s.bootTimeoutMs,
        },
        batchNames(s, ctx.task.batch),
      );
      await ctx.audit.record(
        'validate.cleanup',
        `batch/${ctx.task.batch}`,
        JSON.parse(JSON.stringify(result)),
      );
      return JSON.parse(JSON.stringify(result)) as JsonObject;
    },
  };
}

/** Both kinds, ready for a TaskRegistry: `new TaskRegistry([...validationTaskHandlers(), ...])`. */
export function validationTaskHandlers(opts: ValidationHandlerOptions = {}) {
  return [validateComputeHandler(opts), validateComputeCleanupHandler(opts)] as const;
}
