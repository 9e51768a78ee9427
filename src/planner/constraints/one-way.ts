import type { DestinationConstraint } from './types.js';

/**
 * A plan an operator reads moves load one way: from hosts that give to hosts that take. A host
 * that both sent and received would be load going back and forth (ping-pong), so while the
 * state asks for it (optional moves), a host that has sent may not receive and one that has
 * received may not send. Exchanges are declared pairs, recorded outside this rule.
 */
export const oneWay: DestinationConstraint = {
  name: 'one-way',
  check(state, server, to) {
    if (!state.oneWay) return null;
    if (state.sent[to]! > 0)
      return { constraint: this.name, detail: `${state.hosts[to]!.name} sends servers in this plan` };
    const from = state.at[server]!;
    if (state.received[from]! > 0)
      return { constraint: this.name, detail: `${state.hosts[from]!.name} receives servers in this plan` };
    return null;
  },
};
