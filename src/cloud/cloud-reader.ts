// The control loop's reader of the cloud (src/loop/ports.ts CloudReader) on top of the
// incremental recorder: one cycle per read, and what the recorder could not see, sorted into
// the problems the data-health gate weighs.

import type { ReadProblems } from '../loop/health.js';
import type { CloudRead, CloudReader } from '../loop/ports.js';
import { type CycleResult, type IncrementalOptions, IncrementalRecorder } from './incremental-record.js';
import type { CloudSession } from './session.js';

/**
 * Warnings that follow from something counted elsewhere or that do not make the read partial:
 * per-server fallout of a host left out, servers without a host (building, shelved), and
 * metrics (counted per host and server from the metrics health).
 */
const NOT_PARTIAL = [
  /^host \S+: /,
  /^server \S+: on host \S+, which is not recorded; left out$/,
  /^\d+ servers have no host /,
  /^metrics: /,
];

/** Sorts one cycle's result into the loop's read problems. */
export function readProblems(cycle: CycleResult): ReadProblems {
  const { snapshot, metrics } = cycle;
  const hostsWithoutLoad = new Set<string>();
  const serversWithoutLoad = new Set<string>();
  if (metrics) {
    for (const rule of metrics.health.rules) {
      const into = rule.scope === 'host' ? hostsWithoutLoad : serversWithoutLoad;
      for (const id of [...rule.missing, ...rule.stale]) into.add(id);
    }
  } else {
    // No Prometheus: no load is measured anywhere.
    for (const h of snapshot.hosts) hostsWithoutLoad.add(h.name);
    for (const s of snapshot.servers) serversWithoutLoad.add(s.id);
  }
  return {
    hostsLeftOut: cycle.hostsLeftOut,
    hostsWithoutLoad: [...hostsWithoutLoad].sort(),
    serversWithoutLoad: [...serversWithoutLoad].sort(),
    partialReads: cycle.warnings.filter((w) => !NOT_PARTIAL.some((re) => re.test(w))),
  };
}

/** A CloudReader for the control loop; `last` is the newest cycle's full result (calls, timings). */
export class RecorderCloudReader implements CloudReader {
  readonly recorder: IncrementalRecorder;
  last: CycleResult | undefined;

  constructor(session: CloudSession, options: IncrementalOptions = {}) {
    this.recorder = new IncrementalRecorder(session, options);
  }

  async read(): Promise<CloudRead> {
    const cycle = await this.recorder.cycle();
    this.last = cycle;
    return {
      snapshot: cycle.snapshot,
      problems: readProblems(cycle),
      migrations: cycle.snapshot.migrationHistory ?? [],
    };
  }
}
