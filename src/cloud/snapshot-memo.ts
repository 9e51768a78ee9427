// What the snapshot builder keeps between the cycles of one recorder, so that a server Nova
// reports unchanged costs a lookup, not a rebuild. At 100,000 servers, rebuilding every server
// object, deciding its storage again and sorting them all cost 1.5 s of CPU per cycle with
// nothing changed. The memo also gives the loop what it compares by: an unchanged server is the
// very same object cycle after cycle (src/loop/fingerprint.ts), so a snapshot built with a memo
// must be treated as read-only by everyone.
import type { Server } from '../model/snapshot.js';
import type { NovaAggregate, NovaServer } from './openstack/nova.js';
import type { LoadTargets } from './prometheus/loads.js';
import type { StorageDecision, StoragePolicy } from './storage.js';

export interface MemoEntry {
  /** The Nova record the server was built from: the recorder keeps it while Nova reports no change. */
  nova: NovaServer;
  /** As built, with the load last measured for it (a new load gives a new object). */
  server: Server;
  storage: StorageDecision;
  target: LoadTargets['servers'][number];
  /** The build that last kept it. */
  stamp: number;
}

/** What each server's object also depends on: when any of these changes, every server is built again. */
interface Context {
  aggregates: string;
  sriov: ReadonlySet<string> | undefined;
  storage: StoragePolicy;
}

function sameSet(a: ReadonlySet<string> | undefined, b: ReadonlySet<string> | undefined): boolean {
  if (a === b) return true;
  if (a === undefined || b === undefined || a.size !== b.size) return false;
  for (const x of a) if (!b.has(x)) return false;
  return true;
}

/** A list's ids in its order, and its places in order of id. */
interface Order {
  ids: string[];
  sorted: Uint32Array;
}

const byId = (list: readonly NovaServer[]) => (a: number, b: number) => {
  const x = list[a]!.id;
  const y = list[b]!.id;
  return x < y ? -1 : x > y ? 1 : 0;
};

function fullSort(list: readonly NovaServer[]): Order {
  const idx = Array.from(list.keys()).sort(byId(list));
  return { ids: list.map((s) => s.id), sorted: Uint32Array.from(idx) };
}

/**
 * The order of `list` from that of the list before, when the servers both hold are in the same
 * relative order in both (the others gone, or new): the very same order when nothing changed;
 * undefined otherwise, or when most are new. `known` says whether a server was in the list
 * before; only the few that are not next in it are asked about (indexing 100,000 ids cost as much
 * as sorting them). A server it wrongly calls new is sorted in with the new ones: each of the
 * list's servers is placed once whatever it says.
 */
function repaired(o: Order, list: readonly NovaServer[], known: (id: string) => boolean): Order | undefined {
  const before = o.ids;
  // Where each server of the list before is now (-1: gone), walking both in step.
  const now = new Int32Array(before.length).fill(-1);
  const added: number[] = [];
  let gone = 0;
  let j = 0;
  for (let i = 0; i < list.length; i++) {
    const id = list[i]!.id;
    if (j < before.length && before[j] === id) {
      now[j++] = i;
      continue;
    }
    if (!known(id)) {
      added.push(i);
      continue;
    }
    // Known but not next: the ones skipped are gone, unless this one comes back out of order.
    while (j < before.length && before[j] !== id) {
      j++;
      gone++;
    }
    if (j === before.length) return undefined;
    now[j++] = i;
  }
  gone += before.length - j;
  if (added.length === 0 && gone === 0) return o;
  if (added.length > list.length / 2) return undefined;
  added.sort(byId(list));
  // Each new server's place among the servers before, in order of id (after any equal id).
  const rank = added.map((i) => {
    const id = list[i]!.id;
    let lo = 0;
    let hi = o.sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (before[o.sorted[mid]!]! <= id) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  });
  const sorted = new Uint32Array(list.length);
  let k = 0;
  let a = 0;
  for (let m = 0; m < o.sorted.length; m++) {
    while (a < added.length && rank[a]! <= m) sorted[k++] = added[a++]!;
    const i = now[o.sorted[m]!]!;
    if (i >= 0) sorted[k++] = i;
  }
  while (a < added.length) sorted[k++] = added[a++]!;
  // A list with an id twice would not fill it: the full sort says what it says.
  if (k !== list.length) return undefined;
  return { ids: list.map((s) => s.id), sorted };
}

export class SnapshotMemo {
  readonly servers = new Map<string, MemoEntry>();
  /** Storage decision per kept server, kept up to date entry by entry. */
  readonly storage = new Map<string, StorageDecision>();
  /**
   * The server loads the last build's servers carry (every one of them: undefined when a build's
   * loads were not applied to the end), and where in this build's list the servers built afresh
   * are: a build given the same loads again applies them to those only (50 booted servers, not a
   * pass over 100,000).
   */
  loadsApplied: ReadonlyMap<string, unknown> | undefined;
  built: number[] = [];
  private loadsDone = true;
  private context: Context | undefined;
  private order: Order | undefined;
  private stamp = 0;

  /** Starts a build; returns its stamp. Everything is forgotten when the context changed. */
  begin(
    aggregates: readonly NovaAggregate[],
    sriov: ReadonlySet<string> | undefined,
    storage: StoragePolicy,
  ): number {
    const next: Context = { aggregates: JSON.stringify(aggregates), sriov, storage };
    const c = this.context;
    if (
      c === undefined ||
      c.aggregates !== next.aggregates ||
      c.storage !== storage ||
      !sameSet(c.sriov, sriov)
    ) {
      this.servers.clear();
      this.storage.clear();
    }
    this.context = next;
    this.built = [];
    // The build before had no loads applied to the end (the metrics failed): its new servers
    // carry none, so the next loads go to every server.
    if (!this.loadsDone) this.loadsApplied = undefined;
    this.loadsDone = false;
    return ++this.stamp;
  }

  /**
   * The servers sorted by id. The sort is reused while the list holds the same ids in the same
   * order, and otherwise repaired when the list is the last one with some servers gone and the
   * rest in the same order, new ones anywhere (the recorder's list: Nova's servers in the order
   * first seen): only the new ones are sorted and merged in. Sorting 100,000 ids again for 50
   * booted servers cost about 0.2 s of a steady cycle.
   */
  sorted(list: readonly NovaServer[]): NovaServer[] {
    const o = this.order;
    this.order =
      (o !== undefined ? repaired(o, list, (id) => this.servers.has(id)) : undefined) ?? fullSort(list);
    return Array.from(this.order!.sorted, (i) => list[i]!);
  }

  /** Says the loads of `loadsApplied` are now on every server of the build. */
  loadsFinished(): void {
    this.loadsDone = true;
  }

  /** The entry of a server kept by the build with this stamp, if any. */
  kept(id: string, stamp: number): MemoEntry | undefined {
    const e = this.servers.get(id);
    return e !== undefined && e.stamp === stamp ? e : undefined;
  }

  /** Ends a build: servers it did not keep are forgotten; returns how many. */
  end(stamp: number): number {
    let gone = 0;
    for (const [id, e] of this.servers)
      if (e.stamp !== stamp) {
        this.servers.delete(id);
        this.storage.delete(id);
        gone++;
      }
    return gone;
  }
}
