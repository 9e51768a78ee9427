// What `aicerine config check` prints for a valid file: per aggregate, what it may do and when.
import { formatDuration } from './duration.js';
import type {
  AggregateConfig,
  CoordinationConfig,
  CredentialRef,
  ServiceConfig,
  StoreConfig,
} from './types.js';
import { type WeeklyWindow, windowState } from './windows.js';
import { formatInZone } from './zone.js';

const utc = (d: Date) => `${d.toISOString().slice(0, 16)}Z`;
const UTC_ZONES = /^(Etc\/)?(UTC|UCT|GMT|Zulu|Universal)$/i;
// In the window's own zone for the operator who wrote it, and in UTC for logs and other sites.
const both = (d: Date, zone: string) =>
  UTC_ZONES.test(zone)
    ? formatInZone(d.getTime(), 'UTC').replace(/GMT(\+0)?$/, 'UTC')
    : `${formatInZone(d.getTime(), zone)} (${utc(d)})`;

function credential(r: CredentialRef | null): string {
  if (r === null) return 'none (observe only)';
  if (r.kind === 'environment') return 'OS_CLOUD or the OS_* variables';
  if (r.kind === 'clouds-yaml') return `clouds.yaml cloud ${r.cloud}`;
  if (r.kind === 'application-credential') {
    const from =
      r.secret.kind === 'file'
        ? `file ${r.secret.path}`
        : r.secret.kind === 'env'
          ? `variable ${r.secret.variable}`
          : 'this file';
    return `application credential ${r.id} at ${r.authUrl} (secret from ${from})`;
  }
  return `inline in this file (${r.config.auth.authUrl})`;
}

function store(s: StoreConfig): string {
  if (s.kind === 'sqlite')
    return `SQLite ${s.path}${s.synchronous === 'normal' ? ' (synchronous normal: a power loss may lose the last commits)' : ''}`;
  const where = s.socketPath ? `socket ${s.socketPath}` : `${s.host}${s.port ? `:${s.port}` : ''}`;
  return `MariaDB/MySQL ${s.user}@${where} database ${s.database}`;
}

function coordination(c: CoordinationConfig): string {
  if (c.kind === 'local') return 'coordination: local (one process owns every aggregate; no replicas)';
  const auth = [c.username !== null ? `user ${c.username}` : '', c.tls !== null ? 'TLS' : '']
    .filter(Boolean)
    .join(', ');
  return (
    `coordination: etcd ${c.endpoints.join(', ')} (prefix ${c.prefix}${auth ? `, ${auth}` : ''}) as replica ${c.replicaId}; ` +
    `lease TTL ${formatDuration(c.leaseTtlMs)} (an aggregate is without owner that long after its owner dies; host locks too), rebalance every ${formatDuration(c.rebalanceIntervalMs)}`
  );
}

/** One line per window: whether it is open now, and its next edges in its zone and in UTC. */
export function describeWindow(w: WeeklyWindow, now: Date): string {
  const s = windowState([w], now);
  if (s.open) {
    if (s.closesAt === null) return `${w.text}: open all the time`;
    return `${w.text}: open now, closes ${both(s.closesAt, w.zone)}`;
  }
  if (s.nextOpensAt === null || s.nextClosesAt === null) return `${w.text}: never opens`;
  return `${w.text}: opens ${both(s.nextOpensAt, w.zone)}, closes ${both(s.nextClosesAt, w.zone)}`;
}

function aggregateLines(a: AggregateConfig, now: Date): string[] {
  const b = a.budgets;
  const e = a.emergencies;
  const lines = [
    `  mode ${a.mode}${a.paused ? ', PAUSED' : ''} (in-flight migrations ${a.onPause === 'finish' ? 'finish' : 'are aborted'} on pause)`,
  ];
  if (a.windows.length === 0) lines.push('  windows: none (no routine moves)');
  else {
    lines.push('  windows:');
    for (const w of a.windows) lines.push(`    ${describeWindow(w, now)}`);
  }
  lines.push(
    `  budgets: ${b.perCycle}/cycle, ${b.perWindow}/window, ${b.perDay}/24 h; emergencies ${b.emergency.perCycle}/cycle, ${b.emergency.perDay}/24 h`,
  );
  const hot = [
    e.evacuateDisabledReasonPrefix
      ? `evacuate hosts disabled with "${e.evacuateDisabledReasonPrefix}..."`
      : '',
    e.memory ? `memory above ${e.memory.above * 100}% for ${formatDuration(e.memory.forMs)}` : '',
    e.cpu ? `CPU above ${e.cpu.above * 100}% for ${formatDuration(e.cpu.forMs)}` : '',
  ].filter(Boolean);
  lines.push(`  emergencies: ${hot.length ? hot.join('; ') : 'none'}`);
  lines.push(`  policy: ${a.policy.mode} (${a.policySource})`);
  const c = a.concurrency;
  const overrides = Object.entries(c.perSourceHostOverrides).map(([h, n]) => `${h}=${n}`);
  lines.push(
    `  concurrency: ${c.perSourceHost}/source host${overrides.length ? ` (${overrides.join(', ')})` : ''}, ${c.perDestinationHost}/destination, ${c.perAggregate}/aggregate`,
  );
  if (a.vcpuRatio) {
    const v = a.vcpuRatio;
    lines.push(
      `  VCPU ratio: target ${v.target}, floor ${v.floor}, step ${v.step}; lowered above ${v.lowerAbove} contention, restored below ${v.restoreBelow}`,
    );
  }
  lines.push(
    `  cooldowns: server ${formatDuration(a.cooldowns.serverMs)}, aggregate ${formatDuration(a.cooldowns.aggregateMs)}, after an abort ${formatDuration(a.cooldowns.afterAbortMs)}${a.cooldowns.onAbort === 'quarantine' ? ' and quarantined until released' : ''}; approvals expire after ${formatDuration(a.approvalExpiryMs)}`,
  );
  return lines;
}

export function formatConfigSummary(c: ServiceConfig, now: Date): string {
  const g = c.budgets;
  const global = [
    g.perCycle === null ? '' : `${g.perCycle}/cycle`,
    g.perDay === null ? '' : `${g.perDay}/24 h`,
  ]
    .filter(Boolean)
    .join(', ');
  const out = [
    `OK ${c.file ?? 'configuration'}`,
    `service: cycle every ${formatDuration(c.cycleIntervalMs)}${c.paused ? ', PAUSED' : ''}; ${c.concurrency.global} migrations in flight at most; global budgets: ${global || 'none'}`,
    `reader: ${credential(c.credentials.reader)}; actuator: ${credential(c.credentials.actuator)}${
      c.credentials.tasks ? `; tasks: ${credential(c.credentials.tasks)}` : ''
    }`,
    coordination(c.coordination),
    `store: ${store(c.store)}; notifications: ${c.notifications ? c.notifications.url : 'none (periodic reconcile)'}; metrics: ${c.prometheus ? c.prometheus.url : 'none (flavor sizes)'}`,
  ];
  for (const a of Object.values(c.aggregates)) out.push(`aggregate ${a.name}`, ...aggregateLines(a, now));
  out.push('any other aggregate (defaults)', ...aggregateLines(c.defaults, now));
  return `${out.join('\n')}\n`;
}
