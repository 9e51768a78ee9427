// The service configuration the replay runs with: every aggregate active with a nightly window,
// the shipped budgets and cooldowns. Tests and the bench share it so their figures mean the same.

export interface ReplayConfigOptions {
  cycleInterval?: string;
  windows?: string[];
  /** Per-aggregate overrides (mode, windows, ...), as in `aggregates:` of aicerine.yaml. */
  aggregates?: Record<string, Record<string, unknown>>;
  /** Keys merged into `defaults:`. */
  defaults?: Record<string, unknown>;
}

export const NIGHTLY = ['Mon-Sun 01:00 - 05:00 UTC'];

export function replayConfig(o: ReplayConfigOptions = {}): Record<string, unknown> {
  return {
    cycleInterval: o.cycleInterval ?? '10m',
    concurrency: { global: 8 },
    defaults: {
      mode: 'active',
      windows: o.windows ?? NIGHTLY,
      budgets: { perCycle: 5, perWindow: 40, perDay: 60 },
      cooldowns: { server: '24h', aggregate: '15m' },
      concurrency: { perSourceHost: 1, perDestinationHost: 2, perAggregate: 4 },
      ...o.defaults,
    },
    ...(o.aggregates ? { aggregates: o.aggregates } : {}),
  };
}
