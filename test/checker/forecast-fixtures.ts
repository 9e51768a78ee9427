// Plans made with load: forecast on synthetic clusters whose servers have daily shapes peaking
// at different hours, for the checker's forecast tests and mutation tests.
import type { Plan } from '../../src/model/plan.js';
import type { Snapshot } from '../../src/model/snapshot.js';
import { planSnapshot } from '../../src/planner/index.js';
import { DEFAULT_POLICY } from '../../src/policy/defaults.js';
import type { Policy } from '../../src/policy/types.js';
import { synthesizeSnapshot } from '../../src/snapshot/synth.js';
import { createRng } from '../../src/util/rng.js';

export const FORECAST_POLICY: Policy = {
  ...structuredClone(DEFAULT_POLICY),
  load: 'forecast',
  budget: { maxMoves: 30 },
};

/** Each server peaks for three hours a day, at an hour of its own, at up to 4x its current cpu. */
export function withDailyShapes(snap: Snapshot, seed: number): Snapshot {
  const rng = createRng(seed);
  const servers: NonNullable<Snapshot['profiles']>['servers'] = {};
  snap.servers.forEach((s, i) => {
    // One server in eleven has no history: it falls back to current load.
    if (i % 11 === 5) return;
    const now = s.load?.cpu ?? 0.2;
    const mem = s.load?.memoryMB ?? s.flavor.ramMB / 2;
    const peakHour = Math.floor(rng.next() * 24);
    const height = 1 + 3 * rng.next();
    const cpu = Array.from({ length: 168 }, (_, slot) => {
      const h = slot % 24;
      const near = Math.min(Math.abs(h - peakHour), 24 - Math.abs(h - peakHour)) <= 1;
      return Math.min(s.flavor.vcpus, now * (near ? height : 0.8));
    });
    servers[s.id] = {
      cpu,
      memoryMB: Array.from({ length: 168 }, () => mem),
      samples: Array.from({ length: 168 }, () => 4),
    };
  });
  return {
    ...snap,
    profiles: {
      format: 'aicerine-profiles/1',
      resolution: 'hour-of-week',
      quantile: 0.9,
      timeZone: 'UTC',
      from: '2026-10-01T00:00:00Z',
      to: '2026-10-29T00:00:00Z',
      refreshedAt: '2026-10-29T00:00:00Z',
      minSamples: 2,
      servers,
    },
  };
}

export function forecastBase(seed: number): { snap: Snapshot; plan: Plan } {
  const snap = withDailyShapes(
    synthesizeSnapshot({ hosts: 12, servers: 200, groups: 10, seed, aggregates: 2, disabled: 1 }),
    seed,
  );
  return { snap, plan: planSnapshot(snap, FORECAST_POLICY) };
}
