// What an aggregate's plan is made from, kept so a later cycle can tell whether anything it
// plans on changed: the slice's hosts and servers as they were (compared field by field, loads
// aside), a hash of the small inputs (policy, server groups, load profiles), and the measured
// loads as utilization, compared with a tolerance. A cycle whose inputs match those of the
// aggregate's last plan does not plan, check or store again (docs/control-loop.md, "Unchanged
// aggregates").
//
// Why not a hash of everything: hashing each host and server as JSON cost about 70 ms per
// aggregate of 10,000 servers every cycle, changes or not. The recorder hands back the very
// same server object while Nova reports no change (src/cloud/snapshot-memo.ts), so comparing
// with the plan's objects costs a pointer comparison per unchanged server, and a field-by-field
// comparison only for the objects that are new.
import { createHash } from 'node:crypto';
import type { Host, Server, Snapshot } from '../model/snapshot.js';
import type { Policy } from '../policy/types.js';

export interface PlanningFingerprint {
  /** Hash of the policy, the slice's server groups and the load profiles' state. */
  key: string;
  hosts: readonly Host[];
  servers: readonly Server[];
  /**
   * Measured loads as fractions of each host's physical capacity: hosts first, then servers (a
   * server's load over its host's capacity), `dims` figures each; NaN where none was measured.
   * Numbers, not the load objects: a load changed in place is still seen.
   */
  loads: Float64Array;
  dims: number;
}

function capacity(h: Host | undefined, rc: string): number {
  const inv = h?.inventory[rc];
  const c = inv === undefined ? 0 : inv.total - inv.reserved;
  return c > 0 ? c : 1;
}

function utilization(slice: Snapshot, policy: Policy): Float64Array {
  const dims = policy.dimensions;
  const n = dims.length;
  const out = new Float64Array((slice.hosts.length + slice.servers.length) * n);
  const byName = new Map<string, Host>();
  let k = 0;
  for (const h of slice.hosts) {
    byName.set(h.name, h);
    for (const d of dims) {
      const v = h.load?.[d.load];
      out[k++] = v === undefined ? Number.NaN : v / capacity(h, d.capacity);
    }
  }
  for (const s of slice.servers) {
    const host = byName.get(s.host);
    for (const d of dims) {
      const v = s.load?.[d.load];
      out[k++] = v === undefined ? Number.NaN : v / capacity(host, d.capacity);
    }
  }
  return out;
}

/**
 * The fingerprint of an aggregate's slice (src/loop/slices.ts) as the loop plans it: holds and
 * held hosts are already marked on it, so they count as changes of a server or host. The slice
 * must not be changed afterwards (the fingerprint keeps its hosts and servers).
 */
export function planningFingerprint(slice: Snapshot, aggregate: string, policy: Policy): PlanningFingerprint {
  const hash = createHash('sha256');
  hash.update(JSON.stringify(policy));
  hash.update(JSON.stringify(slice.serverGroups));
  const p = slice.profiles;
  if (p !== undefined)
    hash.update(JSON.stringify([p.refreshedAt, p.resolution, p.quantile, p.errors?.[aggregate] ?? null]));
  return {
    key: hash.digest('base64url'),
    hosts: slice.hosts,
    servers: slice.servers,
    loads: utilization(slice, policy),
    dims: policy.dimensions.length,
  };
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

/** Whether two objects are equal but for `load`: the same values field by field. */
function sameButLoad(a: object, b: object): boolean {
  if (a === b) return true;
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  let n = 0;
  for (const k in x) {
    if (k === 'load' || x[k] === undefined) continue;
    n++;
    const u = x[k];
    const v = y[k];
    if (u === v) continue;
    if (typeof u !== 'object' || typeof v !== 'object' || u === null || v === null) return false;
    if (JSON.stringify(u) !== JSON.stringify(v)) return false;
  }
  let m = 0;
  for (const k in y) if (k !== 'load' && y[k] !== undefined) m++;
  return n === m;
}

/**
 * The first difference between a cycle's planning inputs and those of the last plan, in words;
 * null when there is none beyond loads within the tolerance.
 */
export function fingerprintChange(
  now: PlanningFingerprint,
  ref: PlanningFingerprint,
  tolerance: number,
): string | null {
  if (now.key !== ref.key) return 'the policy, a server group or the load profiles changed';
  if (now.hosts.length !== ref.hosts.length) return 'a host joined or left';
  if (now.servers.length !== ref.servers.length) return 'a server was added or removed';
  for (let i = 0; i < now.hosts.length; i++) {
    const a = now.hosts[i]!;
    const b = ref.hosts[i]!;
    if (a.name !== b.name) return `host ${a.name} is new`;
    if (!sameButLoad(a, b)) return `host ${a.name} changed`;
  }
  for (let i = 0; i < now.servers.length; i++) {
    const a = now.servers[i]!;
    const b = ref.servers[i]!;
    if (a.id !== b.id) return `server ${a.id} is new`;
    if (!sameButLoad(a, b)) return `server ${a.id} changed`;
  }
  if (now.dims !== ref.dims) return 'the policy changed';
  const x = now.loads;
  const y = ref.loads;
  for (let k = 0; k < x.length; k++) {
    const u = x[k]!;
    const v = y[k]!;
    if (Number.isNaN(u) !== Number.isNaN(v) || Math.abs(u - v) > tolerance) {
      const i = Math.floor(k / now.dims);
      return i < now.hosts.length
        ? `host ${now.hosts[i]!.name}: load moved beyond the tolerance`
        : `server ${now.servers[i - now.hosts.length]!.id}: load moved beyond the tolerance`;
    }
  }
  return null;
}
