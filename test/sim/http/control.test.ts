// The simulator's own records (GET /sim/migrations): the duration of a migration is what happened
// on the simulated clock (a held migration takes its hold, not the cost model's figure, which is
// given beside it as plannedSeconds), and null while the migration is in flight.
import { afterEach, describe, expect, it } from 'vitest';
import { startLiveMigration } from '../../../src/sim/migrations.js';
import { DEFAULT_TIMING as T } from '../../../src/sim/model.js';
import { host, server, snapshot } from '../fixtures.js';
import { startFrozen } from './helpers.js';

let close: (() => Promise<void>) | null = null;
afterEach(async () => {
  await close?.();
  close = null;
});

describe('GET /sim/migrations', () => {
  it('reports the simulated duration of each migration, and the planned one beside it', async () => {
    const sim = await startFrozen(snapshot([host('c1'), host('c2')], [server(1, 'c1', 8192)]), {
      timing: { holdSeconds: 25 },
    });
    close = () => sim.close();
    const m = startLiveMigration(sim.cloud, {
      serverUuid: '00000000-0000-4000-8000-000000000001',
      host: 'c2',
    });
    const read = async () =>
      (
        (await (await fetch(`${sim.url}/sim/migrations`)).json()) as {
          migrations: { status: string; durationSeconds: number | null; plannedSeconds: number }[];
        }
      ).migrations[0]!;
    expect(await read()).toMatchObject({ durationSeconds: null, plannedSeconds: m.durationSeconds });
    sim.cloud.advance(3600);
    const done = await read();
    expect(done.status).toBe('completed');
    // Scheduling, preparing, the 25 s hold, then Nova's lag before the record says completed.
    const prepare = Math.min(T.prepareSeconds, m.durationSeconds * 0.2);
    expect(done.durationSeconds).toBeCloseTo(T.scheduleSeconds + prepare + 25 + T.completionLagSeconds, 3);
    expect(done.plannedSeconds).toBe(m.durationSeconds);
    expect(done.durationSeconds).not.toBe(m.durationSeconds);
  });
});
