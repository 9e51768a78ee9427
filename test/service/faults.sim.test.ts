// Faults in the whole loop: the simulator answers 5xx or hangs on a fifth of the calls to every
// API and meets a fifth of Nova's and Placement's writes with 409, while the service runs in
// active mode on one aggregate and observe mode on the other, across a window's opening. No
// wrong move (only moves of checked plans, only to the host chosen, nothing in the observe
// aggregate, nothing outside the window) and no lost record (every migration Nova ran is in
// the store). The faults are counted.
import { describe, expect, it } from 'vitest';
import { aggregateConfig } from '../../src/config/aggregate.js';
import { windowState } from '../../src/config/windows.js';
import { completedMoves, runReplay } from '../../src/service/replay.js';
import { replayConfig } from '../../src/service/replay-config.js';

const EVERY_API = '^(GET|POST|PUT|DELETE) /(compute|placement|identity|prometheus)/';
const WRITES = '^(POST|PUT|DELETE) /(compute|placement)/';

describe('injected faults on every API during active cycles', () => {
  it('cause no wrong move and lose no record', async () => {
    const run = await runReplay({
      // A disabled host to evacuate and an uneven load give the active aggregate a few dozen moves.
      cloud: { hosts: 10, servers: 300, groups: 6, seed: 9, aggregates: 2, disabled: 1 },
      days: 0.25,
      // 00:00 UTC: the first cycles are outside the window, which opens at 01:00.
      speed: 900,
      faultSeed: 8,
      faults: [
        // The first rule that hits answers: writes meet 409s first, then everything 5xx or a hang.
        { pattern: WRITES, kind: 'error', rate: 0.2, status: 409 },
        { pattern: EVERY_API, kind: 'error', rate: 0.1, status: 503 },
        { pattern: EVERY_API, kind: 'error', rate: 0.05, status: 500 },
        { pattern: EVERY_API, kind: 'timeout', rate: 0.05, delayMs: 200 },
      ],
      config: replayConfig({
        cycleInterval: '10m',
        windows: ['Mon-Sun 01:00 - 05:00 UTC'],
        defaults: {
          emergencies: { memory: null, cpu: null, evacuateDisabledReasonPrefix: null },
          retry: { attempts: 5, backoffBase: '1m', backoffMax: '5m' },
        },
        aggregates: { 'agg-2': { mode: 'observe' } },
      }),
    });
    try {
      const r = run.report;
      const hits = Object.fromEntries(r.faults.byRule.map((x) => [x.rule.split(' ^')[0]!, x.hits]));
      console.log(
        `faults: ${r.faults.injected} injected (${JSON.stringify(hits)}); ${r.cycles} cycles (${r.failedCycles} failed: ${r.cycleErrors.join('; ')}); moves ${JSON.stringify(r.moves)}; Nova migrations ${r.accounting.novaMigrations}`,
      );
      expect(r.cloud.aggregates).toEqual(['agg-1', 'agg-2']);
      // The faults happened, on reads and on writes. The counts follow how many cycles fit in
      // the run's wall time: about 30 alone (200+ faults, 28 moves), 8 when the suite's heaviest
      // files (kill -9 children, MariaDB, etcd, Chromium) share the 2 cores with it (72, 7).
      expect(r.faults.injected).toBeGreaterThan(50);
      expect(hits['error 409']).toBeGreaterThan(0);
      expect(hits.timeout).toBeGreaterThan(0);
      // The loop still acted.
      expect(r.moves.completed).toBeGreaterThan(4);

      // No wrong move. Every started move is a move of the plan its execution ran, and that plan
      // passed the checker (a refused plan is stored as observed and never executed).
      const plans = new Map<string, Awaited<ReturnType<typeof run.store.plans.get>>>();
      for (const m of run.moves) {
        const planId = m.execution.planId!;
        if (!plans.has(planId)) plans.set(planId, await run.store.plans.get(planId));
        const stored = plans.get(planId);
        expect(stored?.status).not.toBe('observed');
        const planned = stored?.plan.aggregates[0]?.moves ?? [];
        expect(planned.some((p) => p.server === m.serverId && p.from === m.from && p.to === m.to)).toBe(true);
      }
      // No server ended on a host not chosen for it.
      const last = new Map<string, string>();
      for (const m of completedMoves(run.moves)) last.set(m.serverId, m.to);
      for (const [id, host] of run.hostsAtEnd) expect(host).toBe(last.get(id) ?? run.hostsAtStart.get(id));
      // Nothing moved in the observe aggregate, nothing started outside the window.
      const windows = aggregateConfig(run.config, 'agg-1').windows;
      for (const nova of run.migrations) {
        expect(run.aggregatesOf.get(nova.source)).toEqual(['agg-1']);
        expect(windowState(windows, new Date(nova.createdMs)).open).toBe(true);
      }
      // No lost record: every migration Nova ran is in the store once, agreeing with Nova.
      expect(r.accounting.novaMigrations).toBeGreaterThan(0);
      expect(r.accounting.unrecorded).toEqual([]);
      expect(r.accounting.recordedTwice).toEqual([]);
      expect(r.accounting.stateMismatches).toEqual([]);
    } finally {
      await run.close();
    }
  }, 180_000);
});
