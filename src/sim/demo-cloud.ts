// The cloud `aicerine demo` starts: a few aggregates of a few dozen hosts, over a thousand
// servers, one host disabled for maintenance and some server groups already violated.
import type { SynthOptions } from '../snapshot/synth.js';

export const DEMO_CLOUD: SynthOptions = {
  hosts: 48,
  servers: 1400,
  groups: 40,
  seed: 2026,
  aggregates: 4,
  disabled: 1,
};

export function demoSynthSpec(c: SynthOptions = DEMO_CLOUD): string {
  return [c.hosts, c.servers, c.groups, c.seed, c.aggregates ?? 0, c.disabled ?? 0].join(',');
}
