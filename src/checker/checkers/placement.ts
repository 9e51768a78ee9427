// Guarantee 1: the server is where the plan says when its step comes, and the destination is a host
// Nova's live migration would accept: up, enabled, not forced down, same availability zone and
// aggregate as the source, and not the source itself. Aggregates are the snapshot's: a move listed
// under aggregate A must have both hosts in A, and no two aggregates of one plan may share a host
// (else a move within one could cross out of the other).
import type { Host } from '../../model/snapshot.js';
import type { PlanChecker, ReplayContext, ResolvedMove } from '../replay.js';
import { type ViolationCode, WHOLE_PLAN } from '../violations.js';

// Nova's servicegroup API reports a forced-down service as down whatever its last heartbeat.
const isUp = (host: Host): boolean => host.service.state === 'up' && !host.service.forcedDown;

export function placementChecker(): PlanChecker {
  return {
    constraint: 'placement',
    startsWith(ctx: ReplayContext): void {
      const listed = [...new Set(ctx.plan.aggregates.map((a) => a.name))];
      const shared = new Map<string, string[]>();
      for (const host of ctx.world.snapshot.hosts) {
        const names = ctx.world.aggregatesOf(host).filter((a) => listed.includes(a));
        for (let i = 0; i < names.length; i++) {
          for (let j = i + 1; j < names.length; j++) {
            const pair = [names[i]!, names[j]!].sort().join(' and ');
            shared.set(pair, [...(shared.get(pair) ?? []), host.name]);
          }
        }
      }
      for (const [pair, hosts] of shared) {
        ctx.report({
          code: 'aggregates-overlap',
          aggregate: WHOLE_PLAN,
          host: hosts[0]!,
          detail: `the plan lists aggregates ${pair}, which share ${hosts.length === 1 ? 'host' : 'hosts'} ${hosts.join(', ')}`,
        });
      }
    },
    onMove(ctx: ReplayContext, m: ResolvedMove): void {
      const { move, from, to } = m;
      const report = (code: ViolationCode, host: string, detail: string): void =>
        ctx.report({
          code,
          aggregate: m.aggregate,
          step: move.step,
          wave: move.wave,
          server: move.server,
          host,
          detail,
        });

      const actual = ctx.state.locationOf(m.server.id);
      if (actual !== from.name) {
        report(
          'server-not-on-source',
          from.name,
          `server ${move.server} is on ${actual ?? 'no host'}, not ${from.name}`,
        );
      }
      if (!isUp(from)) {
        const why = from.service.forcedDown ? 'forced down' : from.service.state;
        report('source-down', from.name, `source ${from.name} is ${why}`);
      }
      if (!ctx.world.inAggregate(from, m.aggregate)) {
        report(
          'host-in-wrong-aggregate',
          from.name,
          `move is listed under ${m.aggregate} but its source ${from.name} is in ${ctx.world.aggregatesOf(from).join(', ')}`,
        );
      }

      if (to.name === from.name) {
        report('destination-is-source', to.name, `destination ${to.name} is the source`);
      }
      if (to.service.state !== 'up')
        report('destination-not-up', to.name, `destination ${to.name} is ${to.service.state}`);
      if (to.service.status !== 'enabled') {
        const reason = to.service.disabledReason ? ` (${to.service.disabledReason})` : '';
        report('destination-disabled', to.name, `destination ${to.name} is disabled${reason}`);
      }
      if (to.service.forcedDown)
        report('destination-forced-down', to.name, `destination ${to.name} is forced down`);
      if (to.availabilityZone !== from.availabilityZone) {
        report(
          'zone-mismatch',
          to.name,
          `destination ${to.name} is in zone ${to.availabilityZone}, source ${from.name} in ${from.availabilityZone}`,
        );
      }
      const shared = ctx.world.aggregatesOf(to).some((a) => ctx.world.aggregatesOf(from).includes(a));
      // A source outside the listed aggregate is host-in-wrong-aggregate already; a source inside
      // it needs the destination there too, even when the two hosts share some other aggregate.
      const leavesListed =
        ctx.world.inAggregate(from, m.aggregate) && !ctx.world.inAggregate(to, m.aggregate);
      if (!shared || leavesListed) {
        report(
          'aggregate-mismatch',
          to.name,
          `move is listed under ${m.aggregate}; destination ${to.name} is in ${ctx.world.aggregatesOf(to).join(', ')}, source ${from.name} in ${ctx.world.aggregatesOf(from).join(', ')}`,
        );
      }
    },
  };
}
