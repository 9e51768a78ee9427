// The loop's cloud reader on the incremental recorder: each read is one recorder cycle, and what
// the recorder could not see becomes the data-health gate's input.
import type { CycleResult, IncrementalRecorder } from '../cloud/incremental-record.js';
import type { ReadProblems } from '../loop/health.js';
import type { CloudRead, CloudReader } from '../loop/ports.js';

const LEFT_OUT = /^host (\S+): no Placement resource provider found/;
// Warnings that say a whole read failed (as opposed to a single object left out).
const PARTIAL = /not readable|could not be read|failed/i;

export function readProblems(r: Pick<CycleResult, 'warnings' | 'metrics'>): ReadProblems {
  const hostsLeftOut: string[] = [];
  const partialReads: string[] = [];
  for (const w of r.warnings) {
    const m = LEFT_OUT.exec(w);
    if (m) hostsLeftOut.push(m[1]!);
    else if (PARTIAL.test(w) && !w.startsWith('metrics:')) partialReads.push(w);
  }
  const hostsWithoutLoad = new Set<string>();
  const serversWithoutLoad = new Set<string>();
  for (const rule of r.metrics?.health.rules ?? []) {
    const into = rule.scope === 'host' ? hostsWithoutLoad : serversWithoutLoad;
    for (const x of rule.missing) into.add(x);
    for (const x of rule.stale) into.add(x);
  }
  return {
    hostsLeftOut,
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
