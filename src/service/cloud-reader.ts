// The loop's cloud reader on the incremental recorder: each read is one recorder cycle, and what
// the recorder could not see becomes the data-health gate's input.
import type { CycleResult, IncrementalRecorder } from '../cloud/incremental-record.js';
import type { HealthVerdict, ReadProblems } from '../loop/health.js';
import type { CloudRead, CloudReader } from '../loop/ports.js';
import { setOwn } from '../util/maps.js';

// Warnings that say a whole read failed or left a property unknown for every server (as opposed
// to a single object left out, which hostsLeftOut and the metrics health already cover).
const PARTIAL = /not readable|could not be read|failed|unknown policy|ports unknown/i;
// Servers without a host (building, shelved, failed to schedule) belong to no aggregate: they are
// not a read that failed. Counted as partial, one boot anywhere blocked every aggregate (seen on
// the lab while other users booted servers).
const NOT_PARTIAL = /servers have no host/;

export function readProblems(
  r: Pick<CycleResult, 'warnings' | 'metrics' | 'hostsLeftOut' | 'aggregates'> &
    Partial<Pick<CycleResult, 'building'>>,
): ReadProblems {
  const hostsLeftOut = [...r.hostsLeftOut];
  const leftOutAggregates: Record<string, string[]> = {};
  for (const h of hostsLeftOut)
    setOwn(
      leftOutAggregates,
      h,
      r.aggregates.filter((a) => a.hosts.includes(h)).map((a) => a.name),
    );
  const partialReads: string[] = [];
  for (const w of r.warnings)
    if (PARTIAL.test(w) && !NOT_PARTIAL.test(w) && !w.startsWith('metrics:')) partialReads.push(w);
  const hostsWithoutLoad = new Set<string>();
  const serversWithoutLoad = new Set<string>();
  for (const rule of r.metrics?.health.rules ?? []) {
    const into = rule.scope === 'host' ? hostsWithoutLoad : serversWithoutLoad;
    for (const x of rule.missing) into.add(x);
    for (const x of rule.stale) into.add(x);
  }
  // A host's load is as old as the oldest of its host rules' newest samples.
  const sampled = new Map<string, number>();
  for (const rule of r.metrics?.health.rules ?? []) {
    if (rule.scope !== 'host') continue;
    for (const [host, at] of Object.entries(rule.sampledAt ?? {}))
      sampled.set(host, Math.min(sampled.get(host) ?? Number.POSITIVE_INFINITY, at));
  }
  return {
    ...(sampled.size > 0
      ? {
          hostSampledAt: Object.fromEntries(
            [...sampled].map(([h, at]) => [h, new Date(at * 1000).toISOString()]),
          ),
        }
      : {}),
    ...(r.building !== undefined && r.building.servers > 0 ? { building: r.building } : {}),
    hostsLeftOut,
    leftOutAggregates,
    hostsWithoutLoad: [...hostsWithoutLoad],
    serversWithoutLoad: [...serversWithoutLoad],
    partialReads,
  };
}

/** What the recorder must read again after the gate's verdicts: hosts named, or everything. */
export interface Recovery {
  /** Why the next cycle reads everything, or null. */
  full: string | null;
  /** Hosts whose Placement usages the next cycle reads whatever their generation. */
  hosts: string[];
}

const CONTRADICTORY_HOST = /^contradictory: host (\S+) /;

/**
 * A verdict that doubts the data asks for the data again: a contradiction names its host (its
 * usages are read again next cycle), a stale snapshot asks for a full read. Without this a
 * contradiction the incremental reads cannot see (a claim released without a generation bump)
 * would block the aggregate until the next periodic full read, hours later.
 */
export function recoveryFor(verdicts: readonly HealthVerdict[]): Recovery {
  const hosts = new Set<string>();
  let full: string | null = null;
  for (const v of verdicts) {
    if (v.verdict === 'ok') continue;
    for (const r of v.reasons) {
      const m = CONTRADICTORY_HOST.exec(r);
      if (m) hosts.add(m[1]!);
      else if (r.startsWith('stale: ')) full ??= `data health (${v.aggregate}): ${r}`;
    }
  }
  return { full, hosts: [...hosts].sort() };
}

export class RecorderCloudReader implements CloudReader {
  /** The last recorder cycle, for the service's other consumers (prevention, costs, metrics). */
  last: CycleResult | null = null;

  /** The read in progress: reads are one at a time (a cycle's and an execution's wave check). */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly recorder: IncrementalRecorder) {}

  read(): Promise<CloudRead> {
    // The recorder's changes-since and provider generations are one sequence: two cycles at
    // once would each see half of the changes.
    const next = this.queue.then(() => this.readNow());
    this.queue = next.catch(() => undefined);
    return next;
  }

  private async readNow(): Promise<CloudRead> {
    const r = await this.recorder.cycle();
    this.last = r;
    return { snapshot: r.snapshot, problems: readProblems(r), migrations: r.snapshot.migrationHistory ?? [] };
  }

  /** Passes what the gate doubted on to the recorder, for its next cycle; returns what was asked. */
  recover(verdicts: readonly HealthVerdict[]): Recovery {
    const r = recoveryFor(verdicts);
    if (r.full !== null) this.recorder.requestFullRead(r.full);
    if (r.hosts.length > 0) this.recorder.requestHostReads(r.hosts);
    return r;
  }
}
