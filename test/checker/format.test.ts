import { describe, expect, it } from 'vitest';
import { checkPlan, formatCheckResult } from '../../src/checker/index.js';
import { move, plan, threeHosts } from './fixtures.js';

describe('formatCheckResult', () => {
  it('says OK with the plan size when there is nothing wrong', () => {
    const snap = threeHosts();
    const p = plan(snap, { gold: [move(1, 1, 's1', 'h1', 'h3')] });
    expect(formatCheckResult(checkPlan(snap, p), p, 'p.json')).toBe(
      'OK p.json: 1 move in 1 aggregate, no violations\n',
    );
  });

  it('prints one aligned line per violation in replay order: where, code, constraint, detail', () => {
    const snap = threeHosts({ h3: { status: 'disabled' } });
    const p = plan(snap, { gold: [move(1, 1, 's1', 'h1', 'h3'), move(2, 1, 's2', 'h1', 'h3')] });
    expect(formatCheckResult(checkPlan(snap, p), p, 'p.json')).toBe(
      [
        'FAIL p.json: 2 moves in 1 aggregate, 3 violations of 2 constraints',
        'gold wave 1         per-host-concurrency  [concurrency]  wave 1 has 2 outgoing migrations from h1 (steps 1, 2), limit 1',
        'gold step 1 wave 1  destination-disabled  [placement]    destination h3 is disabled',
        'gold step 2 wave 1  destination-disabled  [placement]    destination h3 is disabled',
        '',
      ].join('\n'),
    );
  });
});
