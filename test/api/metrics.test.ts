import { describe, expect, it } from 'vitest';
import { ApiMetrics } from '../../src/api/metrics.js';
import { NOW, seedPlan, startApi } from './harness.js';

function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const ok = Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`));
    if (ok) return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return undefined;
}

describe('/metrics', () => {
  it('exposes cycles, plan sizes, imbalance, migrations, aborts, ratio changes, verdicts and API latency', async () => {
    const metrics = new ApiMetrics();
    const h = await startApi({ kind: 'none' }, { metrics });
    const { store } = h;
    await seedPlan(store, 'gold', 3);
    await store.dataHealth.record({ aggregate: 'gold', verdict: 'ok', reasons: [], at: NOW.toISOString() });
    await store.dataHealth.record({
      aggregate: 'gold',
      verdict: 'blocked',
      reasons: ['stale'],
      at: NOW.toISOString(),
    });
    await store.ratioChanges.record({
      host: 'compute-01',
      resourceClass: 'VCPU',
      oldRatio: 4,
      newRatio: 3,
      reason: 'memory pressure',
      generation: 2,
      at: NOW.toISOString(),
      by: 'prevention',
    });
    const t = (s: number) => new Date(NOW.getTime() + s * 1000).toISOString();
    await store.createExecution(
      { id: 'e1', aggregate: 'gold', planId: null, startedAt: t(0), startedBy: 'loop:active' },
      [1, 2, 3].map((step) => ({
        step,
        wave: 1,
        serverId: `s${step}`,
        from: 'a',
        to: 'b',
        estimatedSeconds: 30,
      })),
    );
    await store.transitionMove('e1', 1, 'pending', { state: 'issuing', at: t(1) });
    await store.transitionMove('e1', 1, 'issuing', { state: 'migrating', at: t(2), novaMigrationId: 7 });
    await store.transitionMove('e1', 1, 'migrating', { state: 'completed', at: t(41) });
    await store.transitionMove('e1', 2, 'pending', { state: 'issuing', at: t(1) });
    await store.transitionMove('e1', 2, 'issuing', { state: 'failed', at: t(5), detail: 'nova fault' });
    metrics.cycleCompleted({ durationSeconds: 2.5, outcome: 'ok' });
    metrics.cycleCompleted({ durationSeconds: 1, outcome: 'failed' });

    let text = (await h.app.inject({ method: 'GET', url: '/metrics' })).body;
    expect(sample(text, 'aicerine_cycles_total', { outcome: 'ok' })).toBe(1);
    expect(sample(text, 'aicerine_cycles_total', { outcome: 'failed' })).toBe(1);
    expect(sample(text, 'aicerine_plan_moves', { aggregate: 'gold' })).toBe(3);
    expect(sample(text, 'aicerine_imbalance', { aggregate: 'gold', dimension: 'overall' })).toBe(0.1);
    expect(sample(text, 'aicerine_imbalance', { aggregate: 'gold', dimension: 'cpu' })).toBe(0.1);
    expect(sample(text, 'aicerine_data_health_ok', { aggregate: 'gold' })).toBe(0);
    expect(
      sample(text, 'aicerine_data_health_verdicts_total', { aggregate: 'gold', verdict: 'blocked' }),
    ).toBe(1);
    expect(sample(text, 'aicerine_ratio_changes_total', { resource_class: 'VCPU' })).toBe(1);
    // The execution still runs: its moves are not counted yet.
    expect(sample(text, 'aicerine_migrations_total', { outcome: 'completed' })).toBeUndefined();

    await store.transitionMove('e1', 3, 'pending', { state: 'skipped', at: t(50), detail: 'aborted' });
    await store.finishExecution('e1', 'aborted', t(50));
    await h.app.inject({ method: 'GET', url: '/v1/plans' });
    text = (await h.app.inject({ method: 'GET', url: '/metrics' })).body;
    expect(sample(text, 'aicerine_migrations_total', { aggregate: 'gold', outcome: 'completed' })).toBe(1);
    expect(sample(text, 'aicerine_migrations_total', { outcome: 'failed' })).toBe(1);
    expect(sample(text, 'aicerine_migrations_total', { outcome: 'skipped' })).toBe(1);
    expect(sample(text, 'aicerine_migration_duration_seconds_sum', { outcome: 'completed' })).toBe(40);
    expect(sample(text, 'aicerine_execution_aborts_total', { aggregate: 'gold' })).toBe(1);
    expect(
      sample(text, 'aicerine_api_request_duration_seconds_count', { route: '/v1/plans', status: '200' }),
    ).toBe(1);

    // A third scrape counts nothing twice.
    text = (await h.app.inject({ method: 'GET', url: '/metrics' })).body;
    expect(sample(text, 'aicerine_migrations_total', { outcome: 'completed' })).toBe(1);
    expect(sample(text, 'aicerine_data_health_verdicts_total', { verdict: 'blocked' })).toBe(1);
    expect(sample(text, 'aicerine_ratio_changes_total', { resource_class: 'VCPU' })).toBe(1);
    await h.close();
  });
});
