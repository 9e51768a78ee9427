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
   * Numbers, not the load objects: a host's load changed in place is still seen. A server's
   * figures are copied from the aggregate's previous fingerprint when it is the very same object
   * (a snapshot is read-only, src/cloud/snapshot-memo.ts).
   */
  loads: Float64Array;
  dims: number;
  /** Each host's capacity per dimension, as `loads` divides by (hosts in order, `dims` each). */
  caps: Float64Array;
  /**
   * Whether the servers are in strictly increasing order of id (the recorder's snapshots are):
   * two such fingerprints are compared by walking both lists once, in step, instead of indexing
   * one of them by id (10,000 map entries per aggregate and cycle for a few servers that changed).
   */
  byId: boolean;
}

function capacity(h: Host | undefined, rc: string): number {
  const inv = h?.inventory[rc];
  const c = inv === undefined ? 0 : inv.total - inv.reserved;
  return c > 0 ? c : 1;
}

/** Whether the servers are in strictly increasing order of id. */
function sortedById(servers: readonly Server[]): boolean {
  for (let i = 1; i < servers.length; i++) if (!(servers[i - 1]!.id < servers[i]!.id)) return false;
  return true;
}

/**
 * Visits the servers of two lists by id: `(i, j)` for a server in both (the same object or not),
 * `(i, -1)` for one only in `now`, `(-1, j)` for one only in `ref`; in step when both lists are
 * in order of id, else through an index of `ref`. A visit that returns a string stops the walk
 * and is returned.
 */
function pairServers(
  now: { servers: readonly Server[]; byId: boolean },
  ref: { servers: readonly Server[]; byId: boolean },
  visit: (i: number, j: number) => string | null,
): string | null {
  const a = now.servers;
  const b = ref.servers;
  if (now.byId && ref.byId) {
    let i = 0;
    let j = 0;
    while (i < a.length && j < b.length) {
      const x = a[i]!;
      const y = b[j]!;
      const why = x === y || x.id === y.id ? visit(i++, j++) : x.id < y.id ? visit(i++, -1) : visit(-1, j++);
      if (why !== null) return why;
    }
    for (; i < a.length; i++) {
      const why = visit(i, -1);
      if (why !== null) return why;
    }
    for (; j < b.length; j++) {
      const why = visit(-1, j);
      if (why !== null) return why;
    }
    return null;
  }
  const before = new Map<string, number>();
  for (let j = 0; j < b.length; j++) before.set(b[j]!.id, j);
  const seen = new Uint8Array(b.length);
  for (let i = 0; i < a.length; i++) {
    const j = before.get(a[i]!.id);
    if (j !== undefined) seen[j] = 1;
    const why = visit(i, j ?? -1);
    if (why !== null) return why;
  }
  for (let j = 0; j < b.length; j++) {
    if (seen[j] === 1) continue;
    const why = visit(-1, j);
    if (why !== null) return why;
  }
  return null;
}

/** Whether two fingerprints have the same hosts, in the same order, with the same capacities. */
function sameHostsAndCaps(
  a: { hosts: readonly Host[]; caps: Float64Array },
  b: { hosts: readonly Host[]; caps: Float64Array },
): boolean {
  if (a.hosts.length !== b.hosts.length || a.caps.length !== b.caps.length) return false;
  for (let i = 0; i < a.hosts.length; i++) if (a.hosts[i]!.name !== b.hosts[i]!.name) return false;
  for (let k = 0; k < a.caps.length; k++) if (a.caps[k] !== b.caps[k]) return false;
  return true;
}

function utilization(
  slice: Snapshot,
  policy: Policy,
  own: Omit<PlanningFingerprint, 'loads'>,
  previous: PlanningFingerprint | undefined,
): Float64Array {
  const dims = policy.dimensions;
  const n = dims.length;
  const H = slice.hosts.length;
  const out = new Float64Array((H + slice.servers.length) * n);
  const caps = own.caps;
  for (const [i, h] of slice.hosts.entries())
    for (let j = 0; j < n; j++) {
      const v = h.load?.[dims[j]!.load];
      out[i * n + j] = v === undefined ? Number.NaN : v / caps[i * n + j]!;
    }
  // A server that is the very same object as in the cycle before, on the same hosts with the same
  // capacities, has the same figures (the recorder gives a new load a new object, and a snapshot
  // is read-only): they are copied, so this pass costs what changed, not 10,000 lookups.
  const reuse =
    previous !== undefined &&
    previous.key === own.key &&
    previous.dims === n &&
    sameHostsAndCaps(previous, own);
  const done = new Uint8Array(slice.servers.length);
  if (reuse) {
    const pl = previous.loads;
    const PH = previous.hosts.length;
    pairServers(own, previous, (i, j) => {
      if (i >= 0 && j >= 0 && own.servers[i] === previous.servers[j]) {
        for (let d = 0; d < n; d++) out[(H + i) * n + d] = pl[(PH + j) * n + d]!;
        done[i] = 1;
      }
      return null;
    });
  }
  // Each host's capacities once, by its place: a slice has 10,000 servers on 500 hosts, and
  // looking the capacity up again per server was most of this pass's cost every cycle.
  let place: Map<string, number> | undefined;
  // The capacity a server of an unknown host is measured against (capacity(undefined, _)).
  const none = capacity(undefined, '');
  for (let i = 0; i < slice.servers.length; i++) {
    if (done[i] === 1) continue;
    if (place === undefined) {
      place = new Map<string, number>();
      for (const [x, h] of slice.hosts.entries()) place.set(h.name, x);
    }
    const s = slice.servers[i]!;
    const x = place.get(s.host);
    const load = s.load;
    for (let j = 0; j < n; j++) {
      const v = load?.[dims[j]!.load];
      out[(H + i) * n + j] = v === undefined ? Number.NaN : v / (x === undefined ? none : caps[x * n + j]!);
    }
  }
  return out;
}

/**
 * The fingerprint of an aggregate's slice (src/loop/slices.ts) as the loop plans it: holds and
 * held hosts are already marked on it, so they count as changes of a server or host. The slice
 * must not be changed afterwards (the fingerprint keeps its hosts and servers). `previous`, the
 * aggregate's fingerprint of an earlier cycle, only saves work: the result is the same without it.
 */
export function planningFingerprint(
  slice: Snapshot,
  aggregate: string,
  policy: Policy,
  previous?: PlanningFingerprint,
): PlanningFingerprint {
  const hash = createHash('sha256');
  hash.update(JSON.stringify(policy));
  hash.update(JSON.stringify(slice.serverGroups));
  const p = slice.profiles;
  if (p !== undefined)
    hash.update(JSON.stringify([p.refreshedAt, p.resolution, p.quantile, p.errors?.[aggregate] ?? null]));
  const n = policy.dimensions.length;
  const caps = new Float64Array(slice.hosts.length * n);
  for (const [i, h] of slice.hosts.entries())
    for (const [j, d] of policy.dimensions.entries()) caps[i * n + j] = capacity(h, d.capacity);
  const own = {
    key: hash.digest('base64url'),
    hosts: slice.hosts,
    servers: slice.servers,
    dims: n,
    caps,
    byId: sortedById(slice.servers),
  };
  return { ...own, loads: utilization(slice, policy, own, previous) };
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
  // In step through both lists (by id): the servers that are the very same object, nearly all of
  // them, cost a pointer comparison and their loads' comparison.
  const why = pairServers(now, ref, (i, j) => {
    if (j < 0) return count(now.servers[i]!, now.loads, H + i, now.hosts);
    if (i < 0) return count(ref.servers[j]!, ref.loads, H + j, ref.hosts);
    const a = now.servers[i]!;
    if (!sameButLoad(a, ref.servers[j]!)) return `server ${a.id} changed`;
    for (let d = 0; d < D; d++) {
      const u = now.loads[(H + i) * D + d]!;
      const v = ref.loads[(H + j) * D + d]!;
      if (Number.isNaN(u) !== Number.isNaN(v) || Math.abs(u - v) > tolerance)
        return `server ${a.id}: load moved beyond the tolerance`;
    }
    return null;
  });
  if (why !== null) return why;
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

/**
 * The hosts a plan checked on `ref` may see differently on `now`, loads aside: those whose
 * servers came, went or changed, and those whose record changed but for its measured load (a
 * new Placement usage, say). Null when the two do not have the same hosts.
 */
export function touchedHosts(now: PlanningFingerprint, ref: PlanningFingerprint): Set<string> | null {
  if (now.hosts.length !== ref.hosts.length) return null;
  const out = new Set<string>();
  for (let i = 0; i < now.hosts.length; i++) {
    const a = now.hosts[i]!;
    const b = ref.hosts[i]!;
    if (a.name !== b.name) return null;
    if (!sameButLoad(a, b)) out.add(a.name);
  }
  pairServers(now, ref, (i, j) => {
    const a = i < 0 ? undefined : now.servers[i]!;
    const b = j < 0 ? undefined : ref.servers[j]!;
    if (a === b) return null;
    if (a !== undefined && b !== undefined && sameButLoad(a, b)) return null;
    if (a !== undefined) out.add(a.host);
    if (b !== undefined) out.add(b.host);
    return null;
  });
  return out;
}
