// One prevention pass over an aggregate's hosts, in the order that keeps it safe: first find
// ratios rewritten behind our back (and pin those hosts), then decide on fresh pins and the last
// changes, then write the changes one host at a time.
import { decideRatios, type HostRatioState, type LastRatioChange, type RatioDecision } from './decide.js';
import type { RatioSettings } from './settings.js';
import type { RatioChangeSink } from './sink.js';
import type { ApplyResult, OverwriteFinding, RatioWriter } from './writer.js';

export interface PreventionPassInput {
  aggregate: string;
  /** The aggregate's hosts as observed this cycle (hostRatioStates of a fresh snapshot). */
  hosts: readonly HostRatioState[];
  settings: RatioSettings;
  writer: RatioWriter;
  sink: RatioChangeSink;
  now: () => Date;
  /** Observe and decide, write nothing (observe mode, or a paused aggregate). */
  dryRun?: boolean;
}

export interface PreventionPassResult {
  /** Hosts pinned during this pass. */
  overwrites: OverwriteFinding[];
  decisions: RatioDecision[];
  /** One per decision that changes a ratio (none in a dry run). */
  applied: ApplyResult[];
}

export async function runPreventionPass(input: PreventionPassInput): Promise<PreventionPassResult> {
  const { writer, sink } = input;
  const overwrites = input.dryRun
    ? []
    : await writer.detectOverwrites(
        input.hosts.map((h) => ({ host: h.host, rpUuid: h.rpUuid, ratio: h.ratio })),
      );
  const [pinned, records] = await Promise.all([sink.pinned(), sink.lastChanges()]);
  // Any record counts as a change for the waiting times, an abandoned attempt included: after a
  // failed or refused write the host waits its interval like after a real one.
  const lastChanges = new Map<string, LastRatioChange>();
  for (const [host, r] of records) lastChanges.set(host, { at: r.at, from: r.from, to: r.to });
  const decisions = decideRatios({
    hosts: input.hosts,
    settings: input.settings,
    lastChanges,
    pinned: new Set(pinned.keys()),
    now: input.now(),
  });
  const applied: ApplyResult[] = [];
  if (!input.dryRun) {
    for (const d of decisions) if (d.action !== 'hold') applied.push(await writer.apply(d, input.aggregate));
  }
  return { overwrites, decisions, applied };
}
