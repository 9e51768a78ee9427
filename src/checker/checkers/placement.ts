// Guarantee 1: the server is where the plan says when its step comes, and the destination is a host
// Nova's live migration would accept: up, enabled, not forced down, same availability zone and
// planned aggregate as the source, and not the source itself.
import type { Host } from '../../model/snapshot.js';
import type { PlanChecker, ReplayContext, ResolvedMove } from '../replay.js';
import type { ViolationCode } from '../violations.js';

// Nova's servicegroup API reports a forced-down service as down whatever its last heartbeat.
const isUp = (host: Host): boolean => host.service.state === 'up' && !host.service.forcedDown;

export function placementChecker(): PlanChecker {
  return {
    constraint: 'placement',
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
      if (!shared) {
        report(
          'aggregate-mismatch',
          to.name,
          `destination ${to.name} is in ${ctx.world.aggregatesOf(to).join(', ')}, source ${from.name} in ${ctx.world.aggregatesOf(from).join(', ')}`,
        );
      }
    },
  };
}
