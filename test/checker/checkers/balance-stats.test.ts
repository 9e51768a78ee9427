import { describe, expect, it } from 'vitest';
import { checkPlan } from '../../../src/checker/index.js';
import type { AggregatePlan, Plan } from '../../../src/model/plan.js';
import type { Snapshot } from '../../../src/model/snapshot.js';
import { type Case, codesOf, move, plan, threeHosts } from '../fixtures.js';

/** A correct one-move plan, then `edit` applied to its gold aggregate. */
const edited =
  (edit: (gold: AggregatePlan) => void, mode: Plan['mode'] = 'spread', tolerance?: number) =>
  (): { snap: Snapshot; plan: Plan; options: { tolerance?: number } } => {
    const snap = threeHosts();
    const p = plan(snap, { gold: [move(1, 1, 's3', 'h2', 'h3')] }, { mode });
    const gold = structuredClone(p.aggregates[0]);
    if (!gold) throw new Error('fixture has no aggregate');
    edit(gold);
    return {
      snap,
      plan: { ...p, aggregates: [gold] },
      options: tolerance === undefined ? {} : { tolerance },
    };
  };

const cases: Case[] = [
  { name: 'true numbers', build: edited(() => {}), want: [] },
  {
    name: 'after.imbalance off by 0.01',
    build: edited((g) => {
      g.after.imbalance += 0.01;
    }),
    want: ['stats-mismatch'],
  },
  {
    name: 'before.imbalance off by 1e-9',
    build: edited((g) => {
      g.before.imbalance += 1e-9;
    }),
    want: [],
  },
  {
    name: 'off by 0.01 within a tolerance of 0.02',
    build: edited(
      (g) => {
        g.after.imbalance += 0.01;
      },
      'spread',
      0.02,
    ),
    want: [],
  },
  {
    name: 'a dimension max wrong',
    build: edited((g) => {
      const cpu = g.before.dimensions.cpu;
      if (cpu) cpu.max += 0.1;
    }),
    want: ['stats-mismatch'],
  },
  {
    name: 'a reported mean wrong',
    build: edited((g) => {
      const memory = g.after.dimensions.memory;
      if (memory) memory.mean = 0.9;
    }),
    want: ['stats-mismatch'],
  },
  {
    name: 'no mean reported',
    build: edited((g) => {
      for (const d of Object.values(g.after.dimensions)) delete d.mean;
    }),
    want: [],
  },
  {
    name: 'a dimension missing',
    build: edited((g) => {
      delete g.after.dimensions.memory;
    }),
    want: ['stats-mismatch'],
  },
  {
    name: 'a dimension the checker does not compute',
    build: edited((g) => {
      g.after.dimensions.disk = { stddev: 0, max: 0 };
    }),
    want: ['stats-mismatch'],
  },
  {
    name: 'hostsFreed naming a host that still holds servers',
    build: edited((g) => {
      g.hostsFreed = ['h1'];
    }),
    want: ['hosts-freed-mismatch'],
  },
  {
    name: 'hostsFreed naming an unknown host',
    build: edited((g) => {
      g.hostsFreed = ['h9'];
    }),
    want: ['hosts-freed-mismatch'],
  },
  {
    name: 'spread mode may leave a freed host unlisted',
    build: edited((g) => {
      g.hostsFreed = [];
    }),
    want: [],
  },
  {
    name: 'pack mode must list every freed host',
    build: edited((g) => {
      g.hostsFreed = [];
    }, 'pack'),
    want: ['hosts-freed-mismatch'],
  },
  { name: 'pack mode listing the freed host', build: edited(() => {}, 'pack'), want: [] },
];

describe('reported numbers', () => {
  it.each(cases)('$name', ({ build, want }) => expect(codesOf(build())).toEqual(want));

  it('h2 is the host the one-move fixture frees', () => {
    const { plan: p } = edited(() => {})();
    expect(p.aggregates[0]?.hostsFreed).toEqual(['h2']);
  });

  it('says which number is off, and by how much', () => {
    const { snap, plan: p } = edited((g) => {
      g.after.imbalance = 0.5;
    })();
    const [v] = checkPlan(snap, p).violations;
    expect(v).toMatchObject({ code: 'stats-mismatch', constraint: 'stats', aggregate: 'gold' });
    expect(v?.detail).toMatch(/^after: imbalance 0\.500000, recomputed 0\.\d{6}$/);
  });
});
