// How good a move is: the weigher. Imbalance reduction, minus soft server-group penalties it
// adds, minus what the migration costs. A move touches two hosts, so its effect on a standard
// deviation shrinks as the aggregate grows; the weigher therefore counts the imbalance
// reduction times the number of hosts in the imbalance, which makes minGain, the migration
// cost and the soft-group penalty mean the same on 20 hosts and on 5,000.
import type { Policy } from '../../policy/types.js';
import { groupViolationDelta } from '../constraints/hard-groups.js';
import type { ClusterState } from '../state.js';

export interface MoveScore {
  /** Imbalance before minus after. */
  balanceGain: number;
  /** Soft-group penalty added (negative: removed). */
  softPenalty: number;
  /** What the move must buy: its bar (src/policy/threshold.ts; minGain and the per-second cost included). */
  cost: number;
  /** balanceGain * hosts - softPenalty - cost: the move pays when this is above zero. */
  net: number;
}

export function scoreMove(
  state: ClusterState,
  policy: Policy,
  server: number,
  to: number,
  current: number,
): MoveScore {
  const balanceGain = current - state.imbalanceAfter(server, to);
  const softPenalty = softGroupPenaltyDelta(state, policy, server, to);
  const cost = state.servers[server]!.bar;
  return {
    balanceGain,
    softPenalty,
    cost,
    net: balanceGain * hostsWeighed(state, server) - softPenalty - cost,
  };
}

export function softGroupPenaltyDelta(
  state: ClusterState,
  policy: Policy,
  server: number,
  to: number,
): number {
  const g = state.servers[server]!.group;
  if (g < 0) return 0;
  const group = state.groups[g]!;
  if (group.policy !== 'soft-affinity' && group.policy !== 'soft-anti-affinity') return 0;
  return policy.softGroupPenalty * groupViolationDelta(state, group, state.at[server]!, to);
}

/** Hosts counted in the imbalance of the server's aggregate: the weigher's scale. */
export function hostsWeighed(state: ClusterState, server: number): number {
  return Math.max(1, state.aggregates[state.hosts[state.at[server]!]!.aggregate]!.counted.length);
}
