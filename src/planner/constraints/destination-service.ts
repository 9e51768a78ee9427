import type { DestinationConstraint } from './types.js';

// Nova's scheduler would refuse a disabled or down destination; a forced-down one may be dead.
export const destinationService: DestinationConstraint = {
  name: 'destination-service',
  check(state, _server, to) {
    const h = state.hosts[to]!;
    if (!h.up) return { constraint: this.name, detail: `${h.name} is down or forced down` };
    if (h.draining)
      return {
        constraint: this.name,
        detail: `${h.name} is disabled${h.disabledReason ? ` (${h.disabledReason})` : ''}`,
      };
    return null;
  },
};
