// How wrong the last profiles were: their forecast for each host and hour since they were made,
// against what the servers then did (the samples a refresh has just read). Pure.
import { type ServerSeries, slotClock } from '../../forecast/reduce.js';
import type { ForecastError, Host, Server, ServerProfile } from '../../model/snapshot.js';
import type { StoredAggregateProfiles } from './port.js';

const KEYS = [
  ['cpu', 'VCPU'],
  ['memoryMB', 'MEMORY_MB'],
] as const;

/**
 * Mean absolute difference between forecast and measured host utilization (0..1), over the host-
 * hours after `previous` was made. Per host-hour and dimension, both sides sum the same servers:
 * those with a forecast figure for the hour's slot, a sample at that hour and one at or before
 * the time `previous` was made (servers that fell back to current load are not a forecast to
 * judge). A host-hour counts the larger of its cpu and memory differences, over physical
 * capacity. Null when no host-hour had anything to compare.
 *
 * `currentLoadAbsolute` is the same figure for what planning on current load assumes: each
 * server's load when `previous` was made (its last sample then), held for every later hour. A
 * forecast no better than that makes nothing better, and the planner falls back on it.
 */
export function forecastError(
  previous: Pick<StoredAggregateProfiles, 'settings' | 'servers' | 'refreshedAt'>,
  hosts: readonly Host[],
  servers: readonly Server[],
  history: ReadonlyMap<string, ServerSeries>,
  until: Date,
): ForecastError | null {
  const since = Date.parse(previous.refreshedAt) / 1000;
  const end = until.getTime() / 1000;
  const clock = slotClock(previous.settings.resolution, previous.settings.timeZone);
  const onHost = new Map<string, Server[]>();
  for (const s of servers) onHost.set(s.host, [...(onHost.get(s.host) ?? []), s]);
  let sum = 0;
  let hours = 0;
  let first = Number.POSITIVE_INFINITY;
  let last = Number.NEGATIVE_INFINITY;
  let currentSum = 0;
  for (const h of hosts) {
    // Per instant and dimension: forecast, measured and then-current sums over the servers compared.
    const byInstant = new Map<
      number,
      { f: [number, number]; a: [number, number]; c: [number, number]; n: [number, number] }
    >();
    for (const s of onHost.get(h.name) ?? []) {
      const profile: ServerProfile | undefined = previous.servers[s.id];
      const measured = history.get(s.id);
      if (!profile || !measured) continue;
      KEYS.forEach(([key], index) => {
        const k = index as 0 | 1;
        const points = measured[key] ?? [];
        // The server's load when the profiles were made: what a plan on current load then saw.
        let then: number | undefined;
        let thenT = Number.NEGATIVE_INFINITY;
        for (const p of points)
          if (p.t <= since && p.t > thenT && Number.isFinite(p.value)) {
            then = p.value;
            thenT = p.t;
          }
        if (then === undefined) return;
        for (const p of points) {
          if (p.t <= since || p.t > end || !Number.isFinite(p.value)) continue;
          const f = profile[key]?.[clock.slotOf(p.t)];
          if (f === undefined || f === null) continue;
          let e = byInstant.get(p.t);
          if (!e) {
            e = { f: [0, 0], a: [0, 0], c: [0, 0], n: [0, 0] };
            byInstant.set(p.t, e);
          }
          e.f[k] += f;
          e.a[k] += p.value;
          e.c[k] += then;
          e.n[k] += 1;
        }
      });
    }
    for (const [t, e] of byInstant) {
      let worst = -1;
      let worstCurrent = -1;
      KEYS.forEach(([, rc], index) => {
        const k = index as 0 | 1;
        const inv = h.inventory[rc];
        const capacity = inv ? inv.total - inv.reserved : 0;
        if (capacity <= 0 || e.n[k] === 0) return;
        worst = Math.max(worst, Math.abs(e.f[k] - e.a[k]) / capacity);
        worstCurrent = Math.max(worstCurrent, Math.abs(e.c[k] - e.a[k]) / capacity);
      });
      if (worst < 0) continue;
      sum += worst;
      currentSum += worstCurrent;
      hours++;
      first = Math.min(first, t);
      last = Math.max(last, t);
    }
  }
  if (hours === 0) return null;
  return {
    meanAbsolute: Math.round((sum / hours) * 10000) / 10000,
    currentLoadAbsolute: Math.round((currentSum / hours) * 10000) / 10000,
    hours,
    from: new Date(first * 1000).toISOString(),
    to: new Date(last * 1000).toISOString(),
  };
}
