// What-if: the pure planner on the snapshot the loop planned on last, with changes (drain hosts,
// add hosts like one, another policy), answered with the plan and before/after figures. Nothing
// is stored and nothing is executed; the audit log does not record it either (a read).
import { aggregateConfig } from '../../config/aggregate.js';
import { InputError } from '../../errors.js';
import type { Host, Snapshot } from '../../model/snapshot.js';
import { planSnapshot } from '../../planner/index.js';
import { compilePolicy, policyDocument } from '../../policy/load.js';
import type { Policy } from '../../policy/types.js';
import { setOwn } from '../../util/maps.js';
import type { ApiContext, ZodApp } from '../context.js';
import { ApiError } from '../errors.js';
import { errorBody, whatIfBody, whatIfResult } from '../schemas.js';
import { aggregateState, beforeAfter, inAggregate } from '../views/utilization.js';
import { knownAggregate, latestSnapshot } from './insight.js';

type JsonObject = Record<string, unknown>;

function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** `over` laid on `base` key by key (objects merged, everything else replaced). */
function overlay(base: JsonObject, over: JsonObject): JsonObject {
  const out: JsonObject = { ...base };
  for (const [k, v] of Object.entries(over)) {
    const under = Object.hasOwn(base, k) ? base[k] : undefined;
    setOwn(out, k, isObject(v) && isObject(under) ? overlay(under, v) : v);
  }
  return out;
}

/** The value at a dotted/bracket path (`budget.maxMoves`, `dimensions[0].weight`) of a request body. */
function valueAt(doc: unknown, path: string): unknown {
  let cur = doc;
  for (const key of path.split(/[.[\]]/).filter((k) => k !== '')) {
    if (typeof cur !== 'object' || cur === null || !Object.hasOwn(cur, key)) return undefined;
    cur = (cur as Record<string, unknown>)[key];
  }
  return cur;
}

/** The aggregate's policy with the request's keys over it, compiled like a policy file. */
export function whatIfPolicy(base: Policy, over: JsonObject | undefined): Policy {
  if (over === undefined) return base;
  if (over.aggregates !== undefined)
    throw new ApiError(
      400,
      'invalid-field',
      'body.policy.aggregates: a what-if plans the aggregate of body.aggregate only',
      'body.policy.aggregates',
      over.aggregates,
    );
  try {
    return compilePolicy(overlay(policyDocument(base) as JsonObject, over));
  } catch (e) {
    if (!(e instanceof InputError)) throw e;
    const issue = e.issues[0]!;
    const field = `body.policy${issue.path === '' ? '' : issue.path.startsWith('[') ? issue.path : `.${issue.path}`}`;
    const value = 'value' in issue ? issue.value : valueAt(over, issue.path);
    throw new ApiError(400, 'invalid-field', `${field}: ${issue.message}`, field, value);
  }
}

export interface WhatIfChanges {
  drainHosts?: string[];
  addHosts?: { like: string; count: number };
}

/** The snapshot with the changes applied; 400 naming the field when a host is not in the aggregate. */
export function changedSnapshot(
  snap: Snapshot,
  aggregate: string,
  changes: WhatIfChanges,
): { snapshot: Snapshot; drained: string[]; added: string[] } {
  const mine = new Map(snap.hosts.filter(inAggregate(aggregate)).map((h) => [h.name, h]));
  const drain = new Set<string>();
  (changes.drainHosts ?? []).forEach((name, i) => {
    if (!mine.has(name))
      throw new ApiError(
        400,
        'invalid-field',
        `body.drainHosts[${i}]: no host of that name in aggregate ${aggregate}`,
        `body.drainHosts[${i}]`,
        name,
      );
    drain.add(name);
  });
  let hosts: Host[] = snap.hosts.map((h) =>
    drain.has(h.name)
      ? { ...h, service: { ...h.service, status: 'disabled', disabledReason: 'what-if: drained' } }
      : h,
  );
  const added: string[] = [];
  if (changes.addHosts !== undefined) {
    const like = mine.get(changes.addHosts.like);
    if (like === undefined)
      throw new ApiError(
        400,
        'invalid-field',
        `body.addHosts.like: no host of that name in aggregate ${aggregate}`,
        'body.addHosts.like',
        changes.addHosts.like,
      );
    const taken = new Set(snap.hosts.map((h) => h.name));
    for (let i = 1; added.length < changes.addHosts.count; i++) {
      const name = `${like.name}-whatif-${i}`;
      if (taken.has(name)) continue;
      added.push(name);
      const { load: _load, ...rest } = like;
      hosts = [
        ...hosts,
        {
          ...rest,
          name,
          service: { state: 'up', status: 'enabled', forcedDown: false },
          usage: {},
        },
      ];
    }
  }
  return { snapshot: { ...snap, hosts }, drained: [...drain], added };
}

export function registerWhatIf(app: ZodApp, ctx: ApiContext): void {
  app.post(
    '/v1/what-if',
    {
      config: { action: 'what-if' },
      schema: {
        tags: ['what-if'],
        summary: 'Plan the current snapshot with changes; nothing is stored or executed',
        description:
          'Drain hosts (planned as disabled), add empty hosts like an existing one, and/or other policy keys over the aggregate policy.',
        body: whatIfBody,
        response: { 200: whatIfResult, 400: errorBody, 404: errorBody, 503: errorBody },
      },
    },
    async (req) => {
      const body = req.body;
      const snap = latestSnapshot(ctx);
      const name = body.aggregate;
      if (!snap.hosts.some(inAggregate(name))) {
        knownAggregate(ctx, name, snap, 'body.aggregate');
        throw new ApiError(409, 'conflict', `aggregate ${name} has no host in the latest snapshot`);
      }
      const policy = {
        ...whatIfPolicy(aggregateConfig(ctx.config, name).policy, body.policy),
        aggregates: [name],
      };
      const changed = changedSnapshot(snap, name, body);
      let plan: ReturnType<typeof planSnapshot>;
      try {
        plan = planSnapshot(changed.snapshot, policy);
      } catch (e) {
        if (e instanceof InputError)
          throw new ApiError(400, 'invalid-request', `body: ${e.issues[0]?.message ?? e.message}`, 'body');
        throw e;
      }
      const agg = plan.aggregates.find((a) => a.name === name)!;
      const state = aggregateState(changed.snapshot, policy, name)!;
      return {
        aggregate: name,
        asOf: snap.takenAt,
        changes: { drained: changed.drained, added: changed.added },
        plan,
        before: agg.before,
        after: agg.after,
        ...(({ skippedSteps: _s, ...rest }) => rest)(beforeAfter(state, agg.moves)),
      };
    },
  );
}
