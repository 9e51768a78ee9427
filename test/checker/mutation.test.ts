// Mutation tests: a valid plan the planner made is broken in one known way per guarantee the checker
// verifies (docs/checker.md "What is checked", the README "What a plan guarantees"), and the
// checker must name that way by its code. fast-check picks the plan, the move and the mutation's
// target, so a guarantee checked for one convenient move only would not pass.
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { checkPlan, type ViolationCode } from '../../src/checker/index.js';
import type { Move, Plan } from '../../src/model/plan.js';
import type { Host, Server, Snapshot } from '../../src/model/snapshot.js';
import { planSnapshot } from '../../src/planner/index.js';
import { DEFAULT_POLICY } from '../../src/policy/defaults.js';
import { synthesizeSnapshot } from '../../src/snapshot/synth.js';
import { approvedPlan } from './fixtures.js';
import { forecastBase } from './forecast-fixtures.js';

interface Base {
  snap: Snapshot;
  plan: Plan;
}

interface Picked {
  base: Base;
  /** A move of the plan: aggregate index and move index in it. */
  a: number;
  i: number;
  /** A free choice the mutation may use (another host, another move...). */
  k: number;
}

interface Mutated {
  snap: Snapshot;
  plan: Plan;
}

interface Mutation {
  code: ViolationCode;
  what: string;
  /** Undefined when this base offers nothing to break that way (fast-check then draws again). */
  apply(p: Picked): Mutated | undefined;
}

const bases: Base[] = [];
/** Plans made with load: forecast (forecast-fixtures.ts), for the forecast guarantee. */
const forecastBases: Base[] = [];
beforeAll(() => {
  for (const seed of [5, 17]) forecastBases.push(forecastBase(seed));
  for (const seed of [3, 11, 29]) {
    const snap = synthesizeSnapshot({
      hosts: 18,
      servers: 300,
      groups: 24,
      seed,
      aggregates: 3,
      disabled: 2,
    });
    const plan = planSnapshot(snap, { ...structuredClone(DEFAULT_POLICY), budget: { maxMoves: 40 } });
    bases.push({ snap, plan });
  }
});

const clone = <T>(x: T): T => structuredClone(x);

function pick(p: Picked): {
  snap: Snapshot;
  plan: Plan;
  move: Move;
  hostOf: (n: string) => Host;
  serverOf: (id: string) => Server;
} {
  const snap = clone(p.base.snap);
  const plan = clone(p.base.plan);
  const withMoves = plan.aggregates.filter((a) => a.moves.length > 0);
  const agg = withMoves[p.a % withMoves.length]!;
  const move = agg.moves[p.i % agg.moves.length]!;
  return {
    snap,
    plan,
    move,
    hostOf: (n) => snap.hosts.find((h) => h.name === n)!,
    serverOf: (id) => snap.servers.find((s) => s.id === id)!,
  };
}

function aggregateOfMove(plan: Plan, move: Move): Plan['aggregates'][number] {
  return plan.aggregates.find((a) => a.moves.includes(move))!;
}

/** Sets one host's Placement inventory so that nothing more fits on it. */
function fill(host: Host): void {
  for (const rc of ['VCPU', 'MEMORY_MB'] as const) {
    const inv = host.inventory[rc]!;
    inv.allocationRatio = 1;
    inv.reserved = 0;
    inv.total = Math.max(1, host.usage[rc] ?? 0);
  }
}

function notMigratable(change: (s: Server) => void, what: string): Mutation {
  return {
    code: 'not-migratable',
    what,
    apply: (p) => {
      const m = pick(p);
      change(m.serverOf(m.move.server));
      return m;
    },
  };
}

const MUTATIONS: Mutation[] = [
  {
    code: 'forecast-mismatch',
    what: "a forecast peak quoted off by some points in a move's reason (load: forecast plans)",
    apply: (p) => {
      const b = forecastBases[p.k % forecastBases.length]!;
      const m = pick({ ...p, base: b });
      const quote = m.move.reason.match(/forecast peak \w{3} \d\d:00: \S+ (\d+)% → (\d+)%/);
      if (!quote) return undefined;
      const shift = 1 + (p.k % 5);
      m.move.reason = m.move.reason.replace(
        quote[0],
        p.k % 2 === 0
          ? quote[0].replace(`${quote[1]}% →`, `${Number(quote[1]) + shift}% →`)
          : quote[0].replace(`→ ${quote[2]}%`, `→ ${Number(quote[2]) + shift}%`),
      );
      return { snap: m.snap, plan: m.plan };
    },
  },
  // references
  {
    code: 'unknown-server',
    what: 'a move names a server the snapshot lacks',
    apply: (p) => {
      const m = pick(p);
      m.move.server = `ghost-${p.k}`;
      return m;
    },
  },
  {
    code: 'unknown-host',
    what: 'a move names a host the snapshot lacks',
    apply: (p) => {
      const m = pick(p);
      m.move.to = `nowhere-${p.k}`;
      return m;
    },
  },
  // sequence
  {
    code: 'duplicate-aggregate',
    what: 'an aggregate listed twice',
    apply: (p) => {
      const m = pick(p);
      const agg = aggregateOfMove(m.plan, m.move);
      m.plan.aggregates.push({ ...clone(agg), moves: [] });
      return m;
    },
  },
  {
    code: 'steps-not-ordered',
    what: 'a step number skipped',
    apply: (p) => {
      const m = pick(p);
      m.move.step += 1000;
      return m;
    },
  },
  {
    code: 'wave-order',
    what: 'a wave number skipped',
    apply: (p) => {
      const m = pick(p);
      const agg = aggregateOfMove(m.plan, m.move);
      for (const x of agg.moves) if (x.step >= m.move.step) x.wave += 2;
      return m;
    },
  },
  {
    code: 'moved-twice-in-wave',
    what: 'one server in flight twice in a wave',
    apply: (p) => {
      const m = pick(p);
      const agg = aggregateOfMove(m.plan, m.move);
      const at = agg.moves.indexOf(m.move);
      const again: Move = { ...m.move, from: m.move.to, to: m.move.from };
      agg.moves.splice(at + 1, 0, again);
      agg.moves.forEach((x, n) => {
        x.step = n + 1;
        delete x.after;
      });
      return m;
    },
  },
  {
    code: 'bad-dependency',
    what: 'a move that waits for itself',
    apply: (p) => {
      const m = pick(p);
      m.move.after = [m.move.step];
      return m;
    },
  },
  // guarantee 1: placement
  {
    code: 'server-not-on-source',
    what: 'a move whose source is not where the server is',
    apply: (p) => {
      const m = pick(p);
      const others = m.snap.hosts.filter((h) => h.name !== m.move.from);
      m.move.from = others[p.k % others.length]!.name;
      return m;
    },
  },
  {
    code: 'source-down',
    what: 'a source whose nova-compute is down',
    apply: (p) => {
      const m = pick(p);
      m.hostOf(m.move.from).service.state = 'down';
      return m;
    },
  },
  {
    code: 'destination-not-up',
    what: 'a destination whose nova-compute is down',
    apply: (p) => {
      const m = pick(p);
      m.hostOf(m.move.to).service.state = 'down';
      return m;
    },
  },
  {
    code: 'destination-disabled',
    what: 'a disabled destination',
    apply: (p) => {
      const m = pick(p);
      m.hostOf(m.move.to).service.status = 'disabled';
      return m;
    },
  },
  {
    code: 'destination-forced-down',
    what: 'a forced-down destination',
    apply: (p) => {
      const m = pick(p);
      m.hostOf(m.move.to).service.forcedDown = true;
      return m;
    },
  },
  {
    code: 'destination-is-source',
    what: 'a move onto its own source',
    apply: (p) => {
      const m = pick(p);
      m.move.to = m.move.from;
      return m;
    },
  },
  {
    code: 'zone-mismatch',
    what: 'a destination in another availability zone',
    apply: (p) => {
      const m = pick(p);
      m.hostOf(m.move.to).availabilityZone = `elsewhere-${p.k}`;
      return m;
    },
  },
  {
    code: 'aggregate-mismatch',
    what: 'a destination re-targeted into another aggregate, under the same label',
    apply: (p) => {
      const m = pick(p);
      const from = m.hostOf(m.move.from);
      const others = m.snap.hosts.filter((h) => !h.aggregates.some((a) => from.aggregates.includes(a)));
      if (others.length === 0) return undefined;
      m.move.to = others[p.k % others.length]!.name;
      return m;
    },
  },
  {
    code: 'aggregate-mismatch',
    what: 'a destination moved out of every aggregate (as if "_unassigned_")',
    apply: (p) => {
      const m = pick(p);
      m.hostOf(m.move.to).aggregates = [];
      return m;
    },
  },
  {
    code: 'host-in-wrong-aggregate',
    what: 'a move listed under an aggregate of another name (any label, _unassigned_ included)',
    apply: (p) => {
      const m = pick(p);
      const agg = aggregateOfMove(m.plan, m.move);
      const labels = ['_unassigned_', ...m.plan.aggregates.map((a) => a.name), `typo-${p.k}`].filter(
        (n) => n !== agg.name,
      );
      const label = labels[p.k % labels.length]!;
      agg.moves.splice(agg.moves.indexOf(m.move), 1);
      const target = m.plan.aggregates.find((a) => a.name === label);
      const moved: Move = { ...m.move, step: 1, wave: 1 };
      delete moved.after;
      if (target) {
        for (const x of target.moves) {
          x.step += 1;
          x.wave += 1;
          if (x.after) x.after = x.after.map((s) => s + 1);
        }
        target.moves.unshift(moved);
      } else {
        m.plan.aggregates.push({
          ...clone(agg),
          name: label,
          moves: [moved],
          hostsFreed: [],
          unresolved: [],
        });
      }
      return m;
    },
  },
  {
    code: 'aggregates-overlap',
    what: 'two aggregates of the plan sharing a host',
    apply: (p) => {
      const m = pick(p);
      const names = m.plan.aggregates.map((a) => a.name);
      const host = m.hostOf(m.move.from);
      const other = names.filter((n) => !host.aggregates.includes(n));
      if (other.length === 0) return undefined;
      host.aggregates.push(other[p.k % other.length]!);
      return m;
    },
  },
  // guarantee 2: capacity
  {
    code: 'capacity-exceeded',
    what: 'a destination with no room left',
    apply: (p) => {
      const m = pick(p);
      fill(m.hostOf(m.move.to));
      return m;
    },
  },
  // guarantee 3: hard server groups
  {
    code: 'anti-affinity-worse',
    what: 'a move onto a host holding a member of its anti-affinity group',
    apply: (p) => {
      const m = pick(p);
      const moving = new Set(m.plan.aggregates.flatMap((a) => a.moves.map((x) => x.server)));
      const neighbour = m.snap.servers.find((s) => s.host === m.move.to && !moving.has(s.id));
      if (!neighbour) return undefined;
      for (const g of m.snap.serverGroups)
        g.members = g.members.filter((x) => x !== m.move.server && x !== neighbour.id);
      m.snap.serverGroups.push({
        id: 'mutant-anti',
        name: 'mutant-anti',
        policy: 'anti-affinity',
        members: [m.move.server, neighbour.id],
      });
      return m;
    },
  },
  {
    code: 'affinity-worse',
    what: 'a move away from the rest of its affinity group',
    apply: (p) => {
      const m = pick(p);
      const stays = m.snap.servers.filter(
        (s) =>
          s.host === m.move.from && !m.plan.aggregates.some((a) => a.moves.some((x) => x.server === s.id)),
      );
      if (stays.length < 1) return undefined;
      const members = [m.move.server, ...stays.slice(0, 2).map((s) => s.id)];
      for (const g of m.snap.serverGroups) g.members = g.members.filter((x) => !members.includes(x));
      m.snap.serverGroups.push({ id: 'mutant-aff', name: 'mutant-aff', policy: 'affinity', members });
      return m;
    },
  },
  // guarantee 4: concurrency
  {
    code: 'per-host-concurrency',
    what: 'two moves from one source put in one wave, the limit one',
    apply: (p) => {
      const m = pick(p);
      const agg = aggregateOfMove(m.plan, m.move);
      const twin = agg.moves.find((x) => x !== m.move && x.from === m.move.from);
      if (!twin) return undefined;
      // Both moves of this source in one wave, the limit 1.
      twin.wave = m.move.wave;
      agg.moves.sort((x, y) => x.wave - y.wave || x.step - y.step);
      agg.moves.forEach((x, n) => {
        x.step = n + 1;
        delete x.after;
      });
      const waves = [...new Set(agg.moves.map((x) => x.wave))].sort((x, y) => x - y);
      for (const x of agg.moves) x.wave = waves.indexOf(x.wave) + 1;
      m.plan.limits = {
        ...(m.plan.limits ?? { maxMoves: 1000, globalConcurrent: 1000 }),
        perHostOutgoing: 1,
      };
      m.hostOf(m.move.from).maxConcurrentLiveMigrations = 1;
      return m;
    },
  },
  {
    code: 'global-concurrency',
    what: 'a global limit below the size of a wave',
    apply: (p) => {
      const m = pick(p);
      const agg = aggregateOfMove(m.plan, m.move);
      const inWave = agg.moves.filter((x) => x.wave === m.move.wave).length;
      if (inWave < 2) return undefined;
      m.plan.limits = {
        ...(m.plan.limits ?? { maxMoves: 1000, perHostOutgoing: 1 }),
        globalConcurrent: inWave - 1,
      };
      return m;
    },
  },
  // guarantee 5: servers out of live-migration scope, one reason at a time
  notMigratable((s) => {
    s.status = 'SHUTOFF';
  }, 'a server that is not ACTIVE'),
  notMigratable((s) => {
    s.taskState = 'rebooting';
  }, 'a server with a task state'),
  notMigratable((s) => {
    s.metadata = { ...s.metadata, 'aicerine:exclude': 'true' };
  }, 'a server that opts out'),
  notMigratable((s) => {
    s.sharedStorage = false;
  }, 'a server on local storage'),
  notMigratable((s) => {
    s.sriov = true;
  }, 'a server with SR-IOV ports'),
  notMigratable((s) => {
    s.flavor.extraSpecs = { ...s.flavor.extraSpecs, 'hw:cpu_policy': 'dedicated' };
  }, 'a server with a pinned-CPU flavor'),
  notMigratable((s) => {
    s.flavor.extraSpecs = { ...s.flavor.extraSpecs, 'pci_passthrough:alias': 'gpu:1' };
  }, 'a server with PCI passthrough'),
  // guarantee 6: budget
  {
    code: 'budget-exceeded',
    what: 'a budget one below the number of moves',
    apply: (p) => {
      const m = pick(p);
      const total = m.plan.aggregates.reduce((n, a) => n + a.moves.length, 0);
      m.plan.limits = {
        ...(m.plan.limits ?? { perHostOutgoing: 1000, globalConcurrent: 1000 }),
        maxMoves: total - 1,
      };
      return m;
    },
  },
  // mode repair-only
  {
    code: 'repair-only-needless-move',
    what: 'a spread move in a plan that says it is repair-only',
    apply: (p) => {
      const m = pick(p);
      if (m.move.phase !== 'spread') return undefined;
      m.plan.repairOnly = true;
      return m;
    },
  },
  // reported numbers
  {
    code: 'stats-mismatch',
    what: 'an "after" imbalance that the moves do not give',
    apply: (p) => {
      const m = pick(p);
      aggregateOfMove(m.plan, m.move).after.imbalance += 0.01 + p.k / 1000;
      return m;
    },
  },
  {
    code: 'hosts-freed-mismatch',
    what: 'a host reported freed that still has servers',
    apply: (p) => {
      const m = pick(p);
      aggregateOfMove(m.plan, m.move).hostsFreed.push(m.move.to);
      return m;
    },
  },
  {
    code: 'hosts-freed-mismatch',
    what: 'a host reported partly drained that still holds a server that can move',
    apply: (p) => {
      const m = pick(p);
      const agg = aggregateOfMove(m.plan, m.move);
      agg.hostsPartlyDrained = [...(agg.hostsPartlyDrained ?? []), m.move.to];
      return m;
    },
  },
];

// Issue 23's codes (hygiene, worth, reasons) are also broken on a hand-made plan an operator
// approves (fixtures.ts approvedPlan: an exchange, a make-room pair, a hot host, an evacuation,
// hard and soft group moves, true reasons and threshold tests), which has every kind of move.

interface Approved {
  snap: Snapshot;
  plan: Plan;
  /** A move by aggregate name and step. */
  at(aggregate: string, step: number): Move;
  serverOf(id: string): Server;
}

function approved(): Approved {
  const { snap, plan } = approvedPlan();
  return {
    snap,
    plan,
    at: (aggregate, step) =>
      plan.aggregates.find((a) => a.name === aggregate)!.moves.find((m) => m.step === step)!,
    serverOf: (id) => snap.servers.find((s) => s.id === id)!,
  };
}

interface HandMutation {
  code: ViolationCode;
  what: string;
  /** The ways to break the rule; k picks one, and may pick what it acts on. */
  variants: Array<(b: Approved, k: number) => Mutated>;
}

const allMoves = (p: Plan): Array<{ aggregate: string; move: Move }> =>
  p.aggregates.flatMap((a) => a.moves.map((move) => ({ aggregate: a.name, move })));

/** Replaces the first `N%` of a reason by one point more. */
const bumpPercent = (reason: string): string =>
  reason.replace(/(\d+)%/, (_, n: string) => `${Number(n) + 1}%`);

const HAND_MUTATIONS: HandMutation[] = [
  {
    code: 'server-moved-twice',
    what: 'a server moved on again in a later wave',
    variants: [
      (b, k) => {
        const { aggregate, move } = allMoves(b.plan)[k % allMoves(b.plan).length]!;
        const agg = b.plan.aggregates.find((a) => a.name === aggregate)!;
        const last = agg.moves[agg.moves.length - 1]!;
        agg.moves.push({ ...move, step: last.step + 1, wave: last.wave + 1, from: move.to, to: move.from });
        return b;
      },
    ],
  },
  {
    code: 'wave-send-receive',
    what: 'a host both sending and receiving in one wave',
    variants: [
      (b) => {
        // d1 arrives on g2 in the wave b2 leaves it.
        b.at('gold', 4).wave = 1;
        return b;
      },
      (b) => {
        // The exchange's two halves squeezed into one wave.
        b.at('silver', 3).wave = 1;
        return b;
      },
    ],
  },
  {
    code: 'host-send-receive',
    what: 'a host that sends and receives, outside the exemptions',
    variants: [
      (b) => {
        delete b.at('silver', 3).exchangeWith;
        return b;
      },
      (b) => {
        b.at('silver', 1).exchangeWith = 4;
        return b;
      },
      (b) => {
        delete b.at('silver', 2).makesRoomFor;
        return b;
      },
      (b) => {
        // g2 sends b2 and receives d1: exempt only while both are mandatory.
        delete b.at('gold', 4).mandatory;
        return b;
      },
    ],
  },
  {
    code: 'hot-not-first',
    what: 'a move among cool hosts before the hot hosts are relieved',
    variants: [
      (b) => {
        // s1 (63%) and s5 (69%) run hot at 60%; z1 leaves cool s3 in wave 1 beside them.
        b.plan.limits = { ...b.plan.limits!, hotThreshold: 0.6 };
        return b;
      },
      (b) => {
        // b2 loses its mandatory label: an optional move off cool g2 in wave 1, while g1 runs hot.
        const m = b.at('gold', 2);
        delete m.mandatory;
        m.phase = 'spread';
        return b;
      },
    ],
  },
  {
    code: 'exchange-unpaid',
    what: 'an exchange that is malformed or does not pay',
    variants: [
      (b) => {
        const m = b.at('silver', 3);
        m.reason = m.reason.replace('exchange with step 1', 'trading places');
        return b;
      },
      (b) => {
        b.at('silver', 3).exchangeWith = 2;
        return b;
      },
      (b) => {
        // Redirect one half: the two no longer swap the same two hosts.
        b.at('silver', 3).to = 's4';
        return b;
      },
      (b) => {
        // y1 as big as x1: trading them buys nothing.
        const y1 = b.serverOf('y1');
        y1.load = { cpu: 8 };
        y1.flavor.ramMB = 8192;
        return b;
      },
      (b) => {
        // Costs so high that the pair's worth no longer clears their bars.
        const t = b.plan.limits!.threshold!;
        b.plan.limits = { ...b.plan.limits!, threshold: { ...t, perMove: 0.05 } };
        return b;
      },
    ],
  },
  {
    code: 'nonpositive-gain',
    what: 'a spread move that gains nothing and makes room for no named step',
    variants: [
      (b) => {
        delete b.at('silver', 2).makesRoomFor;
        return b;
      },
      (b) => {
        const m = b.at('silver', 2);
        m.reason = m.reason.replace('; makes room for step 4', '');
        return b;
      },
      (b) => {
        // Step 3 goes into s1, not into z1's source s3.
        b.at('silver', 2).makesRoomFor = 3;
        return b;
      },
    ],
  },
  {
    code: 'below-threshold',
    what: 'an optional move whose threshold test is missing, misquoted or failed',
    variants: [
      (b, k) => {
        const optional = allMoves(b.plan).filter((x) => x.move.threshold);
        delete optional[k % optional.length]!.move.threshold;
        return b;
      },
      (b, k) => {
        const optional = allMoves(b.plan).filter((x) => x.move.threshold);
        optional[k % optional.length]!.move.threshold!.bar += 0.001;
        return b;
      },
      (b) => {
        const t = b.plan.limits!.threshold!;
        b.plan.limits = { ...b.plan.limits!, threshold: { ...t, perMove: 1 } };
        return b;
      },
      (b) => {
        const t = b.plan.limits!.threshold!;
        b.plan.limits = { ...b.plan.limits!, threshold: { ...t, mandatoryOnly: true, level: 1 } };
        return b;
      },
    ],
  },
  {
    code: 'mandatory-mislabelled',
    what: 'a mandatory label that is not true',
    variants: [
      (b) => {
        b.at('gold', 1).mandatory = 'evacuation';
        return b;
      },
      (b) => {
        // g4 back in service: nothing to evacuate.
        b.snap.hosts.find((h) => h.name === 'g4')!.service.status = 'enabled';
        return b;
      },
      (b) => {
        // a3's group is soft: not a hard-group repair.
        const m = b.at('gold', 3);
        delete m.softGroup;
        m.mandatory = 'hard-group';
        return b;
      },
      (b) => {
        // The db group no longer has b1 with b2: moving b2 repairs nothing.
        b.snap.serverGroups.find((g) => g.name === 'db')!.members = ['b2', 'c1'];
        return b;
      },
    ],
  },
  {
    code: 'reason-mismatch',
    what: 'a reason quoting a figure or a word the replay does not give',
    variants: [
      (b, k) => {
        const { move } = allMoves(b.plan)[k % allMoves(b.plan).length]!;
        move.reason = bumpPercent(move.reason);
        return b;
      },
      (b, k) => {
        const { move } = allMoves(b.plan)[k % allMoves(b.plan).length]!;
        move.reason = move.reason.replace(
          /imbalance (\d+\.\d+)/,
          (_, x: string) => `imbalance ${(Number(x) + 0.01).toFixed(4)}`,
        );
        return b;
      },
      (b, k) => {
        const cool = allMoves(b.plan).filter((x) => x.move.from !== 'g1');
        const { move } = cool[k % cool.length]!;
        move.reason += `; ${move.from} runs hot`;
        return b;
      },
      (b) => {
        const m = b.at('gold', 1);
        m.reason = m.reason.replace('53 points above', '48 points above');
        return b;
      },
      (b) => {
        // g1 is above the mean in every dimension: it has no room.
        const m = b.at('gold', 1);
        m.reason += '; g1 has room';
        return b;
      },
      (b, k) => {
        const { move } = allMoves(b.plan)[k % allMoves(b.plan).length]!;
        move.gain = (move.gain ?? 0) + 0.001;
        return b;
      },
      (b) => {
        const m = b.at('silver', 2);
        m.reason = m.reason.replace('makes room for step 4', 'makes room for step 3');
        return b;
      },
    ],
  },
];

const picked: fc.Arbitrary<Omit<Picked, 'base'> & { b: number }> = fc.record({
  b: fc.nat({ max: 2 }),
  a: fc.nat(),
  i: fc.nat(),
  k: fc.nat(),
});

describe('checker mutation tests: every guarantee, broken on purpose, is flagged by its code', () => {
  it('starts from valid plans that move servers in every aggregate', () => {
    for (const { snap, plan } of bases) {
      expect(checkPlan(snap, plan).violations).toEqual([]);
      expect(plan.aggregates.filter((a) => a.moves.length > 0).length).toBeGreaterThanOrEqual(2);
    }
    for (const { snap, plan } of forecastBases) {
      expect(checkPlan(snap, plan).violations).toEqual([]);
      expect(plan.aggregates.some((a) => a.forecast?.load === 'forecast' && a.moves.length > 0)).toBe(true);
    }
    const { snap, plan } = approvedPlan();
    expect(checkPlan(snap, plan).violations).toEqual([]);
  });

  it('covers every violation code the checker has', async () => {
    const { VIOLATION_CODES } = await import('../../src/checker/index.js');
    const covered = [...MUTATIONS, ...HAND_MUTATIONS].map((m) => m.code);
    expect([...new Set(covered)].sort()).toEqual([...VIOLATION_CODES].sort());
  });

  it.each(HAND_MUTATIONS.map((m) => [m.code, m.what, m] as const))(
    '%s: %s (hand-made approved plan)',
    (code, _what, mutation) => {
      const used = new Set<number>();
      fc.assert(
        fc.property(fc.nat(), fc.nat(), (v, k) => {
          const variant = v % mutation.variants.length;
          used.add(variant);
          const mutated = mutation.variants[variant]!(approved(), k);
          const found = checkPlan(mutated.snap, mutated.plan).violations.map((x) => x.code);
          expect(found).toContain(code);
        }),
        { numRuns: 40, seed: 7 },
      );
      expect(used.size).toBe(mutation.variants.length);
    },
  );

  it.each(MUTATIONS.map((m) => [m.code, m.what, m] as const))('%s: %s', (code, _what, mutation) => {
    let applied = 0;
    fc.assert(
      fc.property(picked, ({ b, ...rest }) => {
        const mutated = mutation.apply({ base: bases[b]!, ...rest });
        fc.pre(mutated !== undefined);
        applied++;
        const found = checkPlan(mutated.snap, mutated.plan).violations.map((v) => v.code);
        expect(found).toContain(code);
      }),
      { numRuns: 20, seed: 7 },
    );
    expect(applied).toBeGreaterThan(0);
  });
});
