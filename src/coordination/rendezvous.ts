// Which live replica owns an aggregate: rendezvous (highest random weight) hashing with bounded
// load. Every replica computes the same answer from the same lists of live replicas and
// aggregates, with no coordination beyond them. Each aggregate goes to the replica that weighs
// highest for it, unless that one already has its share (aggregates / replicas, rounded), then to
// the next: plain rendezvous gives a replica nothing or everything too often when aggregates are few.
// A replica joining or leaving still moves few aggregates (those it wins or held, and a few whose
// preferred replica filled up).

import { createHash } from 'node:crypto';

function weight(aggregate: string, replica: string): bigint {
  return createHash('sha256').update(aggregate).update('\0').update(replica).digest().readBigUInt64BE(0);
}

/** The replica that should own `aggregate`; null when no replica is live. Ties: the smaller id. */
export function rendezvousOwner(aggregate: string, replicas: readonly string[]): string | null {
  let best: string | null = null;
  let bestWeight = -1n;
  for (const r of replicas) {
    const w = weight(aggregate, r);
    if (w > bestWeight || (w === bestWeight && best !== null && r < best)) {
      best = r;
      bestWeight = w;
    }
  }
  return best;
}

/** The owner of every aggregate (bounded load); empty when no replica is live. */
export function assignAggregates(
  aggregates: readonly string[],
  replicas: readonly string[],
): Map<string, string> {
  const out = new Map<string, string>();
  const live = [...new Set(replicas)].sort();
  if (live.length === 0) return out;
  const names = [...new Set(aggregates)].sort();
  // Shares add up to the number of aggregates (the first replicas by id take one more when it
  // does not divide), so every replica gets its share: none idle while another holds two extra.
  const base = Math.floor(names.length / live.length);
  const extra = names.length % live.length;
  const share = new Map(live.map((r, i) => [r, base + (i < extra ? 1 : 0)]));
  const load = new Map(live.map((r) => [r, 0]));
  for (const a of names) {
    const ranked = live
      .map((r) => ({ r, w: weight(a, r) }))
      .sort((x, y) => (x.w > y.w ? -1 : x.w < y.w ? 1 : x.r < y.r ? -1 : 1));
    const owner = ranked.find((x) => (load.get(x.r) ?? 0) < (share.get(x.r) ?? 0))!.r;
    load.set(owner, (load.get(owner) ?? 0) + 1);
    out.set(a, owner);
  }
  return out;
}

/** The aggregates `replica` should own among `aggregates`, given the live replicas. */
export function aggregatesOf(
  replica: string,
  aggregates: readonly string[],
  replicas: readonly string[],
): string[] {
  const assigned = assignAggregates(aggregates, replicas);
  return [...assigned].filter(([, r]) => r === replica).map(([a]) => a);
}
