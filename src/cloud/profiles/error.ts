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
 * those with a forecast figure for the hour's slot and a sample at that hour (servers that fell
 * back to current load are not a forecast to judge). A host-hour counts the larger of its cpu and
 * memory differences, over physical capacity. Null when no host-hour had anything to compare.
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
  for (const h of hosts) {
    // Per instant and dimension: forecast and measured sums over the servers compared.
    const byInstant = new Map<number, { f: [number, number]; a: [number, number]; n: [number, number] }>();
    for (const s of onHost.get(h.name) ?? []) {
      const profile: ServerProfile | undefined = previous.servers[s.id];
      const measured = history.get(s.id);
      if (!profile || !measured) continue;
      KEYS.forEach(([key], index) => {
        const k = index as 0 | 1;
        for (const p of measured[key] ?? []) {
          if (p.t <= since || p.t > end) continue;
          const f = profile[key]?.[clock.slotOf(p.t)];
          if (f === undefined || f === null) continue;
          let e = byInstant.get(p.t);
          if (!e) {
            e = { f: [0, 0], a: [0, 0], n: [0, 0] };
            byInstant.set(p.t, e);
          }
          e.f[k] += f;
          e.a[k] += p.value;
          e.n[k] += 1;
        }
      });
    }
    for (const [t, e] of byInstant) {
      let worst = -1;
      KEYS.forEach(([, rc], index) => {
        const k = index as 0 | 1;
        const inv = h.inventory[rc];
        const capacity = inv ? inv.total - inv.reserved : 0;
        if (capacity <= 0 || e.n[k] === 0) return;
        worst = Math.max(worst, Math.abs(e.f[k] - e.a[k]) / capacity);
      });
      if (worst < 0) continue;
      sum += worst;
      hours++;
      first = Math.min(first, t);
      last = Math.max(last, t);
    }
  }
  if (hours === 0) return null;
  return {
    meanAbsolute: Math.round((sum / hours) * 10000) / 10000,
    hours,
    from: new Date(first * 1000).toISOString(),
    to: new Date(last * 1000).toISOString(),
  };
}
