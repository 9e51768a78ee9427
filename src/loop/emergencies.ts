// Which hosts are declared emergencies this cycle: disabled by an operator with the configured
// reason prefix (drain it now, window or not), or above a cpu or memory limit for a sustained
// time (a single hot sample is noise; minutes of it are an incident). Pure: the "hot since"
// memory is returned for the caller to keep between cycles.
import type { Host, Snapshot } from '../model/snapshot.js';

export interface EmergencyRules {
  /** A host disabled with a disabled_reason starting with this is evacuated outside windows. Empty: never. */
  evacuateReasonPrefix: string;
  /** Measured cpu load over physical cores at or above which a host runs hot (0..1; undefined: never). */
  cpuLimit?: number | undefined;
  /** Measured memory over physical memory at or above which a host runs hot (0..1; undefined: never). */
  memoryLimit?: number | undefined;
  /** How long a host must stay hot before its draining is an emergency. */
  sustainSeconds: number;
}

export interface EmergencyHost {
  host: string;
  why: string;
}

export interface EmergencyAssessment {
  hosts: EmergencyHost[];
  /** Host → ISO time it was first seen hot, still hot now. Pass back next cycle. */
  hotSince: Map<string, string>;
}

function capacity(h: Host, rc: 'VCPU' | 'MEMORY_MB'): number | undefined {
  const inv = h.inventory[rc];
  return inv ? inv.total - inv.reserved : undefined;
}

function hotness(h: Host, rules: EmergencyRules): string | null {
  const cores = capacity(h, 'VCPU');
  const cpu = h.load?.cpu;
  if (rules.cpuLimit !== undefined && cpu !== undefined && cores && cpu / cores >= rules.cpuLimit)
    return `cpu ${Math.round((cpu / cores) * 100)}% >= ${Math.round(rules.cpuLimit * 100)}%`;
  const ram = capacity(h, 'MEMORY_MB');
  const mem = h.load?.memoryMB;
  if (rules.memoryLimit !== undefined && mem !== undefined && ram && mem / ram >= rules.memoryLimit)
    return `memory ${Math.round((mem / ram) * 100)}% >= ${Math.round(rules.memoryLimit * 100)}%`;
  return null;
}

export function assessEmergencies(
  snapshot: Snapshot,
  hostNames: ReadonlySet<string>,
  rules: EmergencyRules,
  previousHotSince: ReadonlyMap<string, string>,
  now: Date,
): EmergencyAssessment {
  const hosts: EmergencyHost[] = [];
  const hotSince = new Map<string, string>();
  for (const h of snapshot.hosts) {
    if (!hostNames.has(h.name)) continue;
    const reason = h.service.disabledReason ?? '';
    if (
      rules.evacuateReasonPrefix !== '' &&
      h.service.status === 'disabled' &&
      reason.startsWith(rules.evacuateReasonPrefix)
    ) {
      hosts.push({ host: h.name, why: `disabled for evacuation: "${reason}"` });
      continue;
    }
    const hot = hotness(h, rules);
    if (hot === null) continue;
    const since = previousHotSince.get(h.name) ?? now.toISOString();
    hotSince.set(h.name, since);
    const held = (now.getTime() - Date.parse(since)) / 1000;
    if (held >= rules.sustainSeconds)
      hosts.push({
        host: h.name,
        why: `${hot} for ${Math.round(held)} s (sustained limit ${rules.sustainSeconds} s)`,
      });
  }
  return { hosts, hotSince };
}
