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
import type { DimensionDef, Policy } from '../policy/types.js';

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
  // Each host's capacities once, by its place: a slice has 10,000 servers on 500 hosts, and
  // looking the capacity up again per server was most of this pass's cost every cycle.
  const place = new Map<string, number>();
  const caps = new Float64Array(slice.hosts.length * n);
  let k = 0;
  for (const [i, h] of slice.hosts.entries()) {
    place.set(h.name, i);
    for (const [j, d] of dims.entries()) {
      const c = capacity(h, d.capacity);
      caps[i * n + j] = c;
      const v = h.load?.[d.load];
      out[k++] = v === undefined ? Number.NaN : v / c;
    }
  }
  // The capacity a server of an unknown host is measured against (capacity(undefined, _)).
  const none = capacity(undefined, '');
  for (const s of slice.servers) {
    const i = place.get(s.host);
    const load = s.load;
    for (let j = 0; j < n; j++) {
      const v = load?.[dims[j]!.load];
      out[k++] = v === undefined ? Number.NaN : v / (i === undefined ? none : caps[i * n + j]!);
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
    // The recorder hands back the very same object while Nova reports no change: nothing of it
    // is read then (touching 20,000 objects per aggregate was most of this pass).
    if (a === b) continue;
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

/** The load the planner counts for a server in a dimension: measured, else the policy's stand-in. */
function plannerLoad(server: Server, measured: number, d: DimensionDef, host: Host | undefined): number {
  if (!Number.isNaN(measured)) return measured;
  const f = server.flavor;
  const v =
    d.missingServerLoad === 'flavor-vcpus'
      ? f.vcpus
      : d.missingServerLoad === 'flavor-ram'
        ? f.ramMB
        : d.missingServerLoad === 'flavor-disk'
          ? f.diskGB
          : 0;
  return v / capacity(host, d.capacity);
}

/** Whether two hosts are equal but for their measured load and their Placement usage. */
function sameButLoadAndUsage(a: Host, b: Host): boolean {
  if (a === b) return true;
  const { usage: _u, ...x } = a;
  const { usage: _v, ...y } = b;
  return sameButLoad(x, y);
}

/**
 * Servers booted or deleted since the last plan, and nothing else beyond loads within the
 * tolerance: null when each host's utilization, counting the servers that came or went with the
 * load the planner gives them (measured, else the policy's stand-in for a missing load), and its
 * own drift, moved by at most the tolerance; the reason otherwise. This is the argument of
 * `loadTolerance` for a server that appears or disappears: its host's figure moves by its share,
 * so the imbalance moves by at most half the target, and a plan that was right is still right.
 * Server groups are in the key: a new member of one is a change. What this cannot say is whether
 * the plan's moves still fit (a new server may take a destination's room): the caller checks the
 * plan again on today's snapshot before keeping it.
 */
export function absorbedChange(
  now: PlanningFingerprint,
  ref: PlanningFingerprint,
  tolerance: number,
  dimensions: readonly DimensionDef[],
): string | null {
  if (now.key !== ref.key) return 'the policy, a server group or the load profiles changed';
  const D = now.dims;
  if (D !== ref.dims || D !== dimensions.length) return 'the policy changed';
  if (now.hosts.length !== ref.hosts.length) return 'a host joined or left';
  const slot = new Map<string, number>();
  for (let i = 0; i < now.hosts.length; i++) {
    const a = now.hosts[i]!;
    if (a.name !== ref.hosts[i]!.name) return `host ${a.name} is new`;
    if (!sameButLoadAndUsage(a, ref.hosts[i]!)) return `host ${a.name} changed`;
    slot.set(a.name, i);
  }
  // What the servers that came or went add to or take from each host's utilization.
  const moved = new Float64Array(now.hosts.length * D);
  const count = (s: Server, loads: Float64Array, k: number, hosts: readonly Host[]): string | null => {
    const h = slot.get(s.host);
    if (h === undefined) return `server ${s.id} is on host ${s.host}, outside the aggregate`;
    for (let d = 0; d < D; d++) {
      const share = Math.abs(plannerLoad(s, loads[k * D + d]!, dimensions[d]!, hosts[h]));
      moved[h * D + d] = moved[h * D + d]! + (Number.isFinite(share) ? share : Number.POSITIVE_INFINITY);
    }
    return null;
  };
  const H = now.hosts.length;
  const before = new Map<string, number>();
  for (let i = 0; i < ref.servers.length; i++) before.set(ref.servers[i]!.id, i);
  const seen = new Uint8Array(ref.servers.length);
  for (let i = 0; i < now.servers.length; i++) {
    const a = now.servers[i]!;
    const j = before.get(a.id);
    if (j === undefined) {
      const why = count(a, now.loads, H + i, now.hosts);
      if (why !== null) return why;
      continue;
    }
    seen[j] = 1;
    if (!sameButLoad(a, ref.servers[j]!)) return `server ${a.id} changed`;
    for (let d = 0; d < D; d++) {
      const u = now.loads[(H + i) * D + d]!;
      const v = ref.loads[(H + j) * D + d]!;
      if (Number.isNaN(u) !== Number.isNaN(v) || Math.abs(u - v) > tolerance)
        return `server ${a.id}: load moved beyond the tolerance`;
    }
  }
  for (let j = 0; j < ref.servers.length; j++) {
    if (seen[j] === 1) continue;
    const why = count(ref.servers[j]!, ref.loads, H + j, ref.hosts);
    if (why !== null) return why;
  }
  for (let h = 0; h < H; h++)
    for (let d = 0; d < D; d++) {
      const u = now.loads[h * D + d]!;
      const v = ref.loads[h * D + d]!;
      if (Number.isNaN(u) !== Number.isNaN(v)) return `host ${now.hosts[h]!.name}: load measured or lost`;
      // The planner takes a host's measured load when there is one (the servers that came or
      // went are in it, or not yet, as the planner sees them), else the sum of its servers'.
      const change = Number.isNaN(u) ? moved[h * D + d]! : Math.abs(u - v);
      if (change > tolerance)
        return `host ${now.hosts[h]!.name}: servers booted or deleted move its load beyond the tolerance`;
    }
  return null;
}
