// The numbers a plan reports about itself: `before` and `after` must be what formats.md's definition
// gives on the snapshot and on the snapshot with every move applied, and `hostsFreed` may only name
// hosts that held servers and hold none at the end (in pack mode, all of them); `hostsPartlyDrained`
// may only name hosts that some server left and that end holding servers none of which may move.
import type { AggregatePlan, BalanceStats } from '../../model/plan.js';
import type { Server } from '../../model/snapshot.js';
import { whyNotMigratable } from '../migratability.js';
import type { PlanChecker, ReplayContext } from '../replay.js';
import { type AggregateOutcome, aggregateOutcome } from '../stats.js';

function close(a: number, b: number, tolerance: number): boolean {
  return Math.abs(a - b) <= tolerance * Math.max(1, Math.abs(a), Math.abs(b));
}

const show = (n: number): string => (Number.isFinite(n) ? n.toFixed(6) : String(n));

function differences(reported: BalanceStats, expected: BalanceStats, tolerance: number): string[] {
  const out: string[] = [];
  if (!close(reported.imbalance, expected.imbalance, tolerance)) {
    out.push(`imbalance ${show(reported.imbalance)}, recomputed ${show(expected.imbalance)}`);
  }
  for (const [name, want] of Object.entries(expected.dimensions)) {
    const got = reported.dimensions[name];
    if (!got) {
      out.push(`dimension ${name} missing`);
      continue;
    }
    const fields: Array<[string, number | undefined, number | undefined]> = [
      ['stddev', got.stddev, want.stddev],
      ['max', got.max, want.max],
      ['mean', got.mean, got.mean === undefined ? undefined : want.mean],
    ];
    for (const [field, g, w] of fields) {
      if (g !== undefined && w !== undefined && !close(g, w, tolerance)) {
        out.push(`${name}.${field} ${show(g)}, recomputed ${show(w)}`);
      }
    }
  }
  for (const name of Object.keys(reported.dimensions)) {
    if (!(name in expected.dimensions)) out.push(`dimension ${name} is not one the checker computes`);
  }
  return out;
}

function freedDifferences(ctx: ReplayContext, aggregate: AggregatePlan, outcome: AggregateOutcome): string[] {
  const out: string[] = [];
  const expected = new Set(outcome.hostsFreed);
  const listed = new Set<string>();
  for (const host of aggregate.hostsFreed) {
    if (listed.has(host)) out.push(`${host} is listed twice`);
    listed.add(host);
    if (expected.has(host)) continue;
    const known = ctx.world.hosts.get(host);
    if (!known) out.push(`${host} is not in the snapshot`);
    else if (!ctx.world.inAggregate(known, aggregate.name)) out.push(`${host} is not in ${aggregate.name}`);
    else if ((ctx.world.serversOn.get(host)?.length ?? 0) === 0)
      out.push(`${host} held no server to begin with`);
    else out.push(`${host} still holds servers at the end`);
  }
  if (ctx.plan.mode === 'pack') {
    for (const host of outcome.hostsFreed)
      if (!listed.has(host)) out.push(`${host} ends empty but is not listed`);
  }
  return out;
}

function partlyDrainedDifferences(ctx: ReplayContext, aggregate: AggregatePlan): string[] {
  const out: string[] = [];
  const listed = new Set<string>();
  const list = aggregate.hostsPartlyDrained ?? [];
  // Where each server ends, by host: read once, not once per listed host.
  const endOn = new Map<string, Server[]>();
  if (list.length > 0) {
    for (const s of ctx.world.snapshot.servers) {
      const end = ctx.state.locationOf(s.id) ?? s.host;
      const on = endOn.get(end);
      if (on) on.push(s);
      else endOn.set(end, [s]);
    }
  }
  for (const host of list) {
    if (listed.has(host)) out.push(`${host} is listed twice`);
    listed.add(host);
    const known = ctx.world.hosts.get(host);
    if (!known) {
      out.push(`${host} is not in the snapshot`);
      continue;
    }
    if (!ctx.world.inAggregate(known, aggregate.name)) {
      out.push(`${host} is not in ${aggregate.name}`);
      continue;
    }
    const before = ctx.world.serversOn.get(host) ?? [];
    const atEnd = endOn.get(host) ?? [];
    if (atEnd.length === 0) out.push(`${host} ends empty: that is freed, not partly drained`);
    else if (!before.some((s) => (ctx.state.locationOf(s.id) ?? s.host) !== host))
      out.push(`${host}: no server left it`);
    const mobile = atEnd.filter((s) => whyNotMigratable(s).length === 0);
    if (mobile.length > 0)
      out.push(`${host} still holds ${mobile.length} server(s) that can move (${mobile[0]!.id})`);
  }
  return out;
}

export function balanceStatsChecker(): PlanChecker {
  return {
    constraint: 'stats',
    endsWith(ctx: ReplayContext): void {
      for (const aggregate of ctx.plan.aggregates) {
        const outcome = aggregateOutcome(
          ctx.world,
          aggregate.name,
          (id) => ctx.state.locationOf(id),
          ctx.limits.dimensions,
        );
        for (const when of ['before', 'after'] as const) {
          const diff = differences(aggregate[when], outcome[when], ctx.limits.tolerance);
          if (diff.length > 0) {
            ctx.report({
              code: 'stats-mismatch',
              aggregate: aggregate.name,
              detail: `${when}: ${diff.join('; ')}`,
            });
          }
        }
        const freed = freedDifferences(ctx, aggregate, outcome);
        if (freed.length > 0) {
          ctx.report({
            code: 'hosts-freed-mismatch',
            aggregate: aggregate.name,
            detail: `hostsFreed: ${freed.join('; ')}`,
          });
        }
        const partly = partlyDrainedDifferences(ctx, aggregate);
        if (partly.length > 0) {
          ctx.report({
            code: 'hosts-freed-mismatch',
            aggregate: aggregate.name,
            detail: `hostsPartlyDrained: ${partly.join('; ')}`,
          });
        }
      }
    },
  };
}
