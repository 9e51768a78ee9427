// What a stored plan's moves are worth on the data read now, not on the data the plan was made
// from: an approved plan waits for an operator (and a running one for its earlier waves), and
// meanwhile the aggregate moves on. The balance is measured as the independent checker defines
// it (src/checker/stats.ts), so a plan's stored `before` is never the figure a decision uses.
import { aggregateOutcome, balanceOf, serverLoad } from '../checker/stats.js';
import { buildWorld, UNASSIGNED } from '../checker/world.js';
import type { BalanceStats, Move } from '../model/plan.js';
import type { Host, Server, Snapshot } from '../model/snapshot.js';
import type { DimensionDef } from '../policy/types.js';

/** Moves that trade balance for nothing else: what no longer paying drops. */
export const isBalancingMove = (m: Move) =>
  m.phase === 'spread' || m.phase === 'pack' || m.softGroup === true;

/**
 * The aggregate's balance on this snapshot (hosts up and enabled, measured loads first): the
 * checker's `before` (aggregateOutcome), without indexing every server when every host has its
 * load measured, as it does each cycle for every aggregate.
 */
export function measuredBalance(
  snapshot: Snapshot,
  aggregate: string,
  dims: readonly DimensionDef[],
): BalanceStats {
  const counted = snapshot.hosts.filter(
    (h) =>
      (h.aggregates.length > 0 ? h.aggregates.includes(aggregate) : aggregate === UNASSIGNED) &&
      h.service.state === 'up' &&
      h.service.status === 'enabled',
  );
  let on: Map<string, Server[]> | undefined;
  const loadOf = (host: Host, dim: DimensionDef): number => {
    const measured = host.load?.[dim.load];
    if (measured !== undefined) return measured;
    if (on === undefined) {
      on = new Map();
      for (const s of snapshot.servers) {
        const list = on.get(s.host);
        if (list) list.push(s);
        else on.set(s.host, [s]);
      }
    }
    return (on.get(host.name) ?? []).reduce((sum, s) => sum + serverLoad(s, dim), 0);
  };
  return balanceOf(counted, loadOf, dims);
}

export interface GainCheck {
  /** The balance measured now, before any of the moves. */
  before: BalanceStats;
  /** The moves that still pay (and every non-balancing one), in step order. */
  kept: Move[];
  dropped: { step: number; why: string }[];
}

const round = (x: number) => Math.round(x * 10_000) / 10_000;

/**
 * Replays the moves in step order on the fresh snapshot: a balancing move that does not lower
 * the measured imbalance any more is dropped (with the figures), and so is every move that needed
 * it. Evacuations and hard-rule repairs are kept: they are not made for balance.
 */
export function recheckGain(
  snapshot: Snapshot,
  aggregate: string,
  moves: readonly Move[],
  dims: readonly DimensionDef[],
): GainCheck {
  const world = buildWorld(snapshot);
  const at = new Map<string, string>();
  const imbalanceNow = () => aggregateOutcome(world, aggregate, (id) => at.get(id), dims).after.imbalance;
  const before = aggregateOutcome(world, aggregate, () => undefined, dims).before;
  const kept: Move[] = [];
  const dropped: GainCheck['dropped'] = [];
  const gone = new Set<number>();
  let current = before.imbalance;
  for (const m of [...moves].sort((a, b) => a.step - b.step)) {
    const needs = (m.after ?? []).filter((s) => gone.has(s));
    if (needs.length > 0) {
      gone.add(m.step);
      dropped.push({ step: m.step, why: `needed step ${needs.join(', ')}, which no longer pays` });
      continue;
    }
    at.set(m.server, m.to);
    const next = imbalanceNow();
    if (isBalancingMove(m) && !(next < current)) {
      at.delete(m.server);
      gone.add(m.step);
      dropped.push({
        step: m.step,
        why: `no longer pays on fresh figures: imbalance ${round(current)} would become ${round(next)}`,
      });
      continue;
    }
    current = next;
    kept.push(m);
  }
  return { before, kept, dropped };
}
