import { RCS, type RcIndex } from '../state.js';
import type { DestinationConstraint } from './types.js';

// Placement would refuse the allocation. Checked against the state with every earlier move
// completed; the wave scheduler then keeps the double claims of in-flight moves within it.
export const capacity: DestinationConstraint = {
  name: 'capacity',
  check(state, server, to) {
    const s = state.servers[server]!;
    for (let r = 0; r < 3; r++) {
      const free = state.free(to, r as RcIndex);
      if (s.alloc[r]! > free + 1e-9) {
        return {
          constraint: this.name,
          detail: `${state.hosts[to]!.name} has ${Math.max(0, Math.floor(free))} ${RCS[r]} free, needs ${s.alloc[r]}`,
        };
      }
    }
    return null;
  },
};
