import type { DestinationConstraint } from './types.js';

export const notSource: DestinationConstraint = {
  name: 'not-source',
  check(state, server, to) {
    return state.at[server] === to
      ? { constraint: this.name, detail: 'destination is the current host' }
      : null;
  },
};
