// What an aggregate's plan is made from, reduced to something a cycle can compare: a hash of
// every planning input but the measured loads, and the loads themselves as utilization, compared
// with a tolerance. A cycle whose inputs match those of the aggregate's last plan does not plan,
// check or store again (docs/control-loop.md, "Unchanged aggregates").
import { createHash } from 'node:crypto';
import type { Host, Snapshot } from '../model/snapshot.js';
import type { Policy } from '../policy/types.js';

/** Measured loads as fractions of each host's physical capacity, per policy dimension. */
export interface LoadReference {
  /** Host name → utilization per dimension (NaN: no measured load). */
  hosts: Map<string, Float64Array>;
  /** Server id → its load over its host's capacity, per dimension (NaN: none measured). */
  servers: Map<string, Float64Array>;
}

export interface PlanningFingerprint {
  /** Hash of the slice without loads, the policy and the load profiles' state. */
  key: string;
  loads: LoadReference;
}

function capacity(h: Host | undefined, rc: string): number {
  const inv = h?.inventory[rc];
  const c = inv === undefined ? 0 : inv.total - inv.reserved;
  return c > 0 ? c : 1;
}

/**
 * The fingerprint of an aggregate's slice (src/loop/slices.ts) as the loop plans it: holds and
 * held hosts are already marked on it, so they count as changes of a server or host.
 */
export function planningFingerprint(slice: Snapshot, aggregate: string, policy: Policy): PlanningFingerprint {
  const hash = createHash('sha256');
  const dims = policy.dimensions;
  const hosts = new Map<string, Float64Array>();
  const byName = new Map<string, Host>();
  hash.update(JSON.stringify(policy));
  for (const h of slice.hosts) {
    const { load, ...rest } = h;
    hash.update(JSON.stringify(rest));
    byName.set(h.name, h);
    const u = new Float64Array(dims.length);
    for (const [i, d] of dims.entries()) {
      const v = load?.[d.load];
      u[i] = v === undefined ? Number.NaN : v / capacity(h, d.capacity);
    }
    hosts.set(h.name, u);
  }
  const servers = new Map<string, Float64Array>();
  for (const s of slice.servers) {
    const { load, ...rest } = s;
    hash.update(JSON.stringify(rest));
    const host = byName.get(s.host);
    const u = new Float64Array(dims.length);
    for (const [i, d] of dims.entries()) {
      const v = load?.[d.load];
      u[i] = v === undefined ? Number.NaN : v / capacity(host, d.capacity);
    }
    servers.set(s.id, u);
  }
  hash.update(JSON.stringify(slice.serverGroups));
  const p = slice.profiles;
  if (p !== undefined)
    hash.update(JSON.stringify([p.refreshedAt, p.resolution, p.quantile, p.errors?.[aggregate] ?? null]));
  return { key: hash.digest('base64url'), loads: { hosts, servers } };
}

/**
 * How far a host's (or a server's) utilization may move, per dimension, before the aggregate is
 * planned again: half the spread target over the dimensions' total weight. The imbalance is a
 * weighted sum of standard deviations, and a standard deviation moves by at most the largest
 * change of its values, so loads within this tolerance move the imbalance by at most half the
 * target the planner aims at: not enough to make a plan that was right wrong.
 */
export function loadTolerance(policy: Policy): number {
  const weight = policy.dimensions.reduce((s, d) => s + Math.abs(d.weight), 0);
  return weight > 0 ? policy.spread.targetImbalance / (2 * weight) : 0;
}

/** The first load that moved beyond the tolerance since `ref`, in words; null when none did. */
export function loadChange(now: LoadReference, ref: LoadReference, tolerance: number): string | null {
  const differs = (a: Float64Array, b: Float64Array): number => {
    for (let i = 0; i < a.length; i++) {
      const x = a[i]!;
      const y = b[i]!;
      if (Number.isNaN(x) !== Number.isNaN(y)) return i;
      if (Math.abs(x - y) > tolerance) return i;
    }
    return -1;
  };
  for (const [name, u] of now.hosts) {
    const r = ref.hosts.get(name);
    if (r === undefined || r.length !== u.length) return `host ${name} is new`;
    const i = differs(u, r);
    if (i >= 0) return `host ${name}: load moved beyond the tolerance`;
  }
  for (const [id, u] of now.servers) {
    const r = ref.servers.get(id);
    if (r === undefined || r.length !== u.length) return `server ${id} is new`;
    const i = differs(u, r);
    if (i >= 0) return `server ${id}: load moved beyond the tolerance`;
  }
  return null;
}
