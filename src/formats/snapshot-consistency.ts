// Cross-field checks a schema cannot express: a snapshot whose numbers contradict each other
// is refused, precisely, rather than planned on.
import type { InputIssue } from '../errors.js';
import { profileSlotCount, type Snapshot } from '../model/snapshot.js';

const CAPACITY_CLASSES = ['VCPU', 'MEMORY_MB', 'DISK_GB'] as const;

export function checkSnapshotConsistency(s: Snapshot, file?: string): InputIssue[] {
  const issues: InputIssue[] = [];
  const add = (path: string, message: string, value?: unknown): void => {
    issues.push(value === undefined ? { file, path, message } : { file, path, message, value });
  };

  const hostIndex = new Map<string, number>();
  s.hosts.forEach((h, i) => {
    const prev = hostIndex.get(h.name);
    if (prev !== undefined) add(`hosts[${i}].name`, `duplicate host name (also hosts[${prev}])`, h.name);
    else hostIndex.set(h.name, i);
    for (const rc of CAPACITY_CLASSES) {
      const inv = h.inventory[rc];
      const used = h.usage[rc];
      if (inv === undefined) {
        if (rc !== 'DISK_GB') add(`hosts[${i}].inventory.${rc}`, 'missing inventory');
        continue;
      }
      if (inv.reserved > inv.total) {
        add(`hosts[${i}].inventory.${rc}.reserved`, `more than total ${inv.total}`, inv.reserved);
      }
      const capacity = (inv.total - inv.reserved) * inv.allocationRatio;
      if (used !== undefined && used > capacity + 1e-9) {
        add(
          `hosts[${i}].usage.${rc}`,
          `usage above capacity (${inv.total} - ${inv.reserved}) * ${inv.allocationRatio} = ${round(capacity)}`,
          used,
        );
      }
    }
  });

  // A server no host could hold is a broken record (a unit mix-up, a typo), not a cloud to plan.
  const largest = { VCPU: 0, MEMORY_MB: 0 };
  for (const h of s.hosts) {
    for (const rc of ['VCPU', 'MEMORY_MB'] as const) {
      const inv = h.inventory[rc];
      if (inv) largest[rc] = Math.max(largest[rc], (inv.total - inv.reserved) * inv.allocationRatio);
    }
  }
  const serverIndex = new Map<string, number>();
  s.servers.forEach((v, i) => {
    if (s.hosts.length > 0 && v.flavor.vcpus > largest.VCPU) {
      add(
        `servers[${i}].flavor.vcpus`,
        `more than any host can hold (the largest holds ${round(largest.VCPU)} VCPU)`,
        v.flavor.vcpus,
      );
    }
    if (s.hosts.length > 0 && v.flavor.ramMB > largest.MEMORY_MB) {
      add(
        `servers[${i}].flavor.ramMB`,
        `more than any host can hold (the largest holds ${round(largest.MEMORY_MB)} MiB)`,
        v.flavor.ramMB,
      );
    }
    const prev = serverIndex.get(v.id);
    if (prev !== undefined) add(`servers[${i}].id`, `duplicate server id (also servers[${prev}])`, v.id);
    else serverIndex.set(v.id, i);
    if (!hostIndex.has(v.host)) add(`servers[${i}].host`, 'server on an unknown host', v.host);
  });

  const groupOf = new Map<string, number>();
  const groupIds = new Map<string, number>();
  s.serverGroups.forEach((g, gi) => {
    const prev = groupIds.get(g.id);
    if (prev !== undefined)
      add(`serverGroups[${gi}].id`, `duplicate group id (also serverGroups[${prev}])`, g.id);
    else groupIds.set(g.id, gi);
    g.members.forEach((m, mi) => {
      const path = `serverGroups[${gi}].members[${mi}]`;
      if (!serverIndex.has(m)) {
        add(path, 'group member that does not exist', m);
        return;
      }
      const other = groupOf.get(m);
      if (other === gi) add(path, 'member listed twice', m);
      else if (other !== undefined)
        add(path, `server already in serverGroups[${other}] (one group per server)`, m);
      else groupOf.set(m, gi);
    });
    if (g.rules?.max_server_per_host !== undefined && g.policy !== 'anti-affinity') {
      add(`serverGroups[${gi}].rules.max_server_per_host`, `only valid for anti-affinity, not ${g.policy}`);
    }
  });

  checkProfiles(s, add);
  return issues;
}

/**
 * Load profiles whose slot lists do not fit their resolution contradict themselves: refused,
 * naming the server and the field. A profile of a server the snapshot does not hold is not an
 * error (the server left between the history read and the snapshot, or was cut out of the file);
 * profileWarnings lists those.
 */
function checkProfiles(s: Snapshot, add: (path: string, message: string, value?: unknown) => void): void {
  const p = s.profiles;
  if (!p) return;
  if (Date.parse(p.from) > Date.parse(p.to)) add('profiles.from', `after profiles.to (${p.to})`, p.from);
  const slots = profileSlotCount(p.resolution);
  for (const [id, profile] of Object.entries(p.servers)) {
    for (const field of ['cpu', 'memoryMB', 'samples'] as const) {
      const list = profile[field];
      if (list !== undefined && list.length !== slots)
        add(
          `profiles.servers.${id}.${field}`,
          `expected ${slots} slots for resolution ${p.resolution}, got ${list.length}`,
        );
    }
  }
  for (const [aggregate, e] of Object.entries(p.errors ?? {})) {
    if (Date.parse(e.from) > Date.parse(e.to))
      add(`profiles.errors.${aggregate}.from`, `after profiles.errors.${aggregate}.to (${e.to})`, e.from);
  }
}

/** Things in a valid snapshot's profiles worth a warning: profiles of servers it does not hold. */
export function profileWarnings(s: Snapshot): string[] {
  if (!s.profiles) return [];
  const ids = new Set(s.servers.map((v) => v.id));
  const unknown = Object.keys(s.profiles.servers).filter((id) => !ids.has(id));
  if (unknown.length === 0) return [];
  return [
    `profiles.servers: ${unknown.length} profile(s) of servers not in the snapshot, ignored (${unknown.slice(0, 5).join(', ')}${unknown.length > 5 ? ', …' : ''})`,
  ];
}

function round(n: number): number {
  return Math.round(n * 1000) / 1000;
}
