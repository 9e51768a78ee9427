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

export class SnapshotMemo {
  readonly servers = new Map<string, MemoEntry>();
  /** Storage decision per kept server, kept up to date entry by entry. */
  readonly storage = new Map<string, StorageDecision>();
  /**
   * The server loads the last build's servers carry, and whether every server of the build was
   * kept from the one before: then a build given the same loads again has nothing to apply.
   */
  loadsApplied: ReadonlyMap<string, unknown> | undefined;
  allKept = false;
  private context: Context | undefined;
  private order: { ids: string[]; sorted: Uint32Array } | undefined;
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
    this.allKept = true;
    return ++this.stamp;
  }

  /** The servers sorted by id; the sort is reused while the list holds the same ids in the same order. */
  sorted(list: readonly NovaServer[]): NovaServer[] {
    const o = this.order;
    let same = o !== undefined && o.ids.length === list.length;
    for (let i = 0; same && i < list.length; i++) same = list[i]!.id === o!.ids[i];
    if (!same) {
      const idx = Array.from(list.keys()).sort((a, b) => {
        const x = list[a]!.id;
        const y = list[b]!.id;
        return x < y ? -1 : x > y ? 1 : 0;
      });
      this.order = { ids: list.map((s) => s.id), sorted: Uint32Array.from(idx) };
    }
    return Array.from(this.order!.sorted, (i) => list[i]!);
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
