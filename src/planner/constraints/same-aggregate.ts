import type { DestinationConstraint } from './types.js';

// Aggregates carry flavor and tenant isolation; Aicerine plans within one and never across.
export const sameAggregate: DestinationConstraint = {
  name: 'same-aggregate',
  check(state, server, to) {
    const from = state.hosts[state.at[server]!]!;
    const dest = state.hosts[to]!;
    if (from.aggregate === dest.aggregate) return null;
    const names = state.aggregates;
    return {
      constraint: this.name,
      detail: `${dest.name} is in ${names[dest.aggregate]!.name}, the server in ${names[from.aggregate]!.name}`,
    };
  },
};
