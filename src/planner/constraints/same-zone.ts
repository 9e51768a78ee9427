import type { DestinationConstraint } from './types.js';

// A live migration must not move a server out of the availability zone its user chose.
export const sameZone: DestinationConstraint = {
  name: 'same-zone',
  check(state, server, to) {
    const from = state.hosts[state.at[server]!]!;
    const dest = state.hosts[to]!;
    return from.az === dest.az
      ? null
      : { constraint: this.name, detail: `${dest.name} is in zone ${dest.az}, the server is in ${from.az}` };
  },
};
