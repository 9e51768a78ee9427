// The loop's cloud reader on the incremental recorder: each read is one recorder cycle, and what
// the recorder could not see becomes the data-health gate's input.
import type { CycleResult, IncrementalRecorder } from '../cloud/incremental-record.js';
import type { ReadProblems } from '../loop/health.js';
import type { CloudRead, CloudReader } from '../loop/ports.js';
import { setOwn } from '../util/maps.js';

// Warnings that say a whole read failed or left a property unknown for every server (as opposed
// to a single object left out, which hostsLeftOut and the metrics health already cover).
const PARTIAL = /not readable|could not be read|failed|unknown policy|ports unknown/i;

export function readProblems(
  r: Pick<CycleResult, 'warnings' | 'metrics' | 'hostsLeftOut' | 'aggregates'>,
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
  for (const w of r.warnings) if (PARTIAL.test(w) && !w.startsWith('metrics:')) partialReads.push(w);
  const hostsWithoutLoad = new Set<string>();
  const serversWithoutLoad = new Set<string>();
  for (const rule of r.metrics?.health.rules ?? []) {
    const into = rule.scope === 'host' ? hostsWithoutLoad : serversWithoutLoad;
    for (const x of rule.missing) into.add(x);
    for (const x of rule.stale) into.add(x);
  }
  return {
    hostsLeftOut,
    leftOutAggregates,
    hostsWithoutLoad: [...hostsWithoutLoad],
    serversWithoutLoad: [...serversWithoutLoad],
    partialReads,
  };
}

export class RecorderCloudReader implements CloudReader {
  /** The last recorder cycle, for the service's other consumers (prevention, costs, metrics). */
  last: CycleResult | null = null;

  constructor(private readonly recorder: IncrementalRecorder) {}

  async read(): Promise<CloudRead> {
    const r = await this.recorder.cycle();
    this.last = r;
    return { snapshot: r.snapshot, problems: readProblems(r), migrations: r.snapshot.migrationHistory ?? [] };
  }
}
