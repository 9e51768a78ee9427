// Applies ratio decisions to Placement, generation-safely, and notices when someone else owns a
// host's ratio. Every write is recorded (intent before, outcome after) through the sink; a host
// whose ratio was rewritten behind our back (nova.conf's cpu_allocation_ratio: nova-compute puts
// its value back on every periodic update) is pinned and never written again until an operator
// releases it.
import { randomUUID } from 'node:crypto';
import type { Actuator } from '../cloud/actuator.js';
import {
  type PlacementInventory,
  type ProviderInventories,
  updateInventory,
} from '../cloud/openstack/placement.js';
import type { RatioDecision } from './decide.js';
import {
  expectedRatio,
  type PinnedHost,
  type RatioChangeRecord,
  type RatioChangeSink,
  ratiosOurs,
} from './sink.js';

/** The Placement reads the writer makes (the reader credential): generations, usages, ratios found. */
export interface RatioPlacementPort {
  getInventories(rpUuid: string): Promise<ProviderInventories>;
  getUsages(rpUuid: string): Promise<Record<string, number>>;
}

/** The one write it makes (only an actuator has it). */
export type RatioWritePort = Pick<Actuator, 'kind' | 'putInventory'>;

export interface RatioWriterPorts {
  placement: RatioPlacementPort;
  actuator: RatioWritePort;
  sink: RatioChangeSink;
  now: () => Date;
  newId?: () => string;
  /** Re-reads after a 409 before giving up (default 5). */
  maxConflictRetries?: number;
}

export const APPLY_OUTCOMES = [
  'written',
  'unchanged',
  'pinned',
  'overwritten',
  'stale',
  'usage',
  'failed',
] as const;
/**
 * written: Placement now holds `to`. unchanged: it already did. pinned: the host is pinned, not
 * touched. overwritten: the ratio found is neither ours nor expected; the host is now pinned.
 * stale: the ratio moved since the decision was made (decide again). usage: allocations grew and
 * `to` would no longer hold them. failed: Placement refused or could not be reached.
 */
export type ApplyOutcome = (typeof APPLY_OUTCOMES)[number];

export interface ApplyResult {
  host: string;
  outcome: ApplyOutcome;
  from: number;
  to: number;
  /** The ratio Placement held when the outcome was decided. */
  found: number | undefined;
  detail: string;
}

export interface RatioObservation {
  host: string;
  rpUuid: string;
  /** The VCPU allocation ratio read (from a snapshot or a Placement read). */
  ratio: number;
}

export interface OverwriteFinding extends PinnedHost {}

const same = (a: number, b: number) => Math.abs(a - b) <= 1e-6;

export class RatioWriter {
  private readonly newId: () => string;

  constructor(private readonly ports: RatioWriterPorts) {
    this.newId = ports.newId ?? randomUUID;
  }

  /** Writes one decision (holds are ignored: nothing to write). */
  async apply(decision: RatioDecision, aggregate: string): Promise<ApplyResult> {
    const { host, rpUuid, from, to } = decision;
    const result = (outcome: ApplyOutcome, found: number | undefined, detail: string): ApplyResult => ({
      host,
      outcome,
      from,
      to,
      found,
      detail,
    });
    if (decision.action === 'hold') return result('unchanged', from, 'a hold writes nothing');
    const { sink, placement, actuator } = this.ports;
    const pins = await sink.pinned();
    const pin = pins.get(host);
    if (pin) return result('pinned', undefined, `pinned since ${pin.at}: ${pin.reason}`);

    const last = (await sink.lastChanges()).get(host);
    const changeId = this.newId();
    const base = { changeId, host, rpUuid, aggregate, from, to, reason: decision.reason };
    await sink.record({ ...base, state: 'intended', at: this.stamp() });
    const abandon = async (outcome: ApplyOutcome, found: number | undefined, detail: string) => {
      await sink.record({ ...base, state: 'abandoned', at: this.stamp(), detail });
      return result(outcome, found, detail);
    };

    let verdict: { outcome: 'write' | 'unchanged' | 'overwritten' | 'stale' | 'usage'; found: number } = {
      outcome: 'write',
      found: from,
    };
    let used = 0;
    let written: PlacementInventory;
    try {
      used = (await placement.getUsages(rpUuid)).VCPU ?? 0;
      written = await updateInventory(
        placement,
        actuator,
        rpUuid,
        'VCPU',
        // Re-run on every attempt, so after a 409 the checks see the fresh inventory.
        (inv) => {
          const found = inv.allocationRatio;
          if (last && !ratiosOurs(last).some((r) => same(r, found)))
            verdict = { outcome: 'overwritten', found };
          else if (same(found, to)) verdict = { outcome: 'unchanged', found };
          else if (!same(found, from)) verdict = { outcome: 'stale', found };
          else if (used > (inv.total - inv.reserved) * to) verdict = { outcome: 'usage', found };
          else {
            verdict = { outcome: 'write', found };
            return { ...inv, allocationRatio: to };
          }
          return inv;
        },
        { maxConflictRetries: this.ports.maxConflictRetries ?? 5 },
      );
    } catch (e) {
      return abandon('failed', undefined, `Placement: ${(e as Error).message}`);
    }

    const v = verdict as {
      outcome: 'write' | 'unchanged' | 'overwritten' | 'stale' | 'usage';
      found: number;
    };
    switch (v.outcome) {
      case 'overwritten': {
        const expected = ratiosOurs(last as RatioChangeRecord);
        await this.pinHost(host, rpUuid, expectedRatio(last as RatioChangeRecord), v.found);
        return abandon(
          'overwritten',
          v.found,
          `${host}: Placement holds ${v.found}, not what Aicerine wrote (${expected.join(' or ')}): something else (nova.conf cpu_allocation_ratio) owns this ratio; host pinned`,
        );
      }
      case 'stale':
        return abandon(
          'stale',
          v.found,
          `${host}: ratio is ${v.found} now, not ${from} as decided; decide again`,
        );
      case 'usage':
        return abandon('usage', v.found, `${host}: ${used} VCPU allocated would not fit at ratio ${to}`);
      case 'unchanged':
        await sink.record({ ...base, state: 'written', at: this.stamp(), detail: 'already at this ratio' });
        return result('unchanged', v.found, `${host}: already at ${to}`);
      case 'write':
        await sink.record({ ...base, state: 'written', at: this.stamp() });
        return result('written', written.allocationRatio, `${host}: VCPU allocation ratio ${from} -> ${to}`);
    }
  }

  /**
   * Compares what was observed with what Aicerine last wrote to each host; on a difference it
   * reads the provider again (the observation may predate our write) and, when the difference is
   * real, pins the host. Returns the hosts pinned now.
   */
  async detectOverwrites(observed: readonly RatioObservation[]): Promise<OverwriteFinding[]> {
    const { sink, placement } = this.ports;
    const [lasts, pins] = await Promise.all([sink.lastChanges(), sink.pinned()]);
    const found: OverwriteFinding[] = [];
    for (const o of observed) {
      const last = lasts.get(o.host);
      if (!last || pins.has(o.host)) continue;
      const ours = ratiosOurs(last);
      if (ours.some((r) => same(r, o.ratio))) continue;
      const fresh = (await placement.getInventories(o.rpUuid)).inventories.VCPU?.allocationRatio;
      if (fresh === undefined || ours.some((r) => same(r, fresh))) continue;
      found.push(await this.pinHost(o.host, o.rpUuid, expectedRatio(last), fresh));
    }
    return found;
  }

  /**
   * An operator's release of a pinned host (once its nova.conf no longer sets the ratio): the
   * ratio Placement holds now becomes the baseline, and the host is written again.
   */
  async release(host: string, rpUuid: string, by: string, aggregate = ''): Promise<number> {
    const ratio = (await this.ports.placement.getInventories(rpUuid)).inventories.VCPU?.allocationRatio;
    if (ratio === undefined) throw new Error(`${host}: resource provider ${rpUuid} has no VCPU inventory`);
    await this.ports.sink.record({
      changeId: this.newId(),
      host,
      rpUuid,
      aggregate,
      from: ratio,
      to: ratio,
      reason: `released by ${by}: ratio ${ratio} adopted as found`,
      state: 'adopted',
      at: this.stamp(),
    });
    await this.ports.sink.unpin(host);
    return ratio;
  }

  private async pinHost(host: string, rpUuid: string, expected: number, found: number): Promise<PinnedHost> {
    const p: PinnedHost = {
      host,
      rpUuid,
      expected,
      found,
      at: this.stamp(),
      reason: `VCPU allocation ratio rewritten behind Aicerine's back: wrote ${expected}, found ${found} (cpu_allocation_ratio set in nova.conf?)`,
    };
    await this.ports.sink.pin(p);
    return p;
  }

  private stamp(): string {
    return this.ports.now().toISOString();
  }
}
