// `aicerine check`: the preconditions an operator must meet before Aicerine acts, per
// aggregate, each with why it matters and what happens when it does not hold.
import type { Host, Server } from '../model/snapshot.js';
import { nonMigratableReasons } from './migratable.js';
import { probeRatioOwner, type RatioProbeOptions, type RatioProbeResult } from './ratio-probe.js';
import { recordSnapshot } from './record.js';
import type { CloudSession } from './session.js';
import { declarationsFor, type SiteDeclarations } from './site.js';
import { SHARED_STORAGE_KEY, type StoragePolicy } from './storage.js';

export type CheckStatus = 'ok' | 'fail' | 'info';

export interface CheckResult {
  aggregate: string;
  id: string;
  title: string;
  status: CheckStatus;
  /** What was found. */
  details: string[];
  why: string;
  /** What happens if it does not hold. */
  ifNot: string;
}

export interface CheckReport {
  results: CheckResult[];
  /** No check failed. */
  allHold: boolean;
  warnings: string[];
}

export interface CheckOptions {
  site?: SiteDeclarations;
  /** Probe one up, enabled host per aggregate for a nova.conf-pinned ratio (writes Placement; needs the actuator). */
  probeRatios?: RatioProbeOptions;
  historyDays?: number;
  now?: () => Date;
}

export const UNASSIGNED = '_unassigned_';

const list = (xs: string[], n = 8) =>
  xs.length > n ? `${xs.slice(0, n).join(', ')}, … (${xs.length})` : xs.join(', ');

export async function runChecks(session: CloudSession, opts: CheckOptions = {}): Promise<CheckReport> {
  const rec = await recordSnapshot(session, {
    ...(opts.site?.storage ? { storage: opts.site.storage } : {}),
    historyDays: opts.historyDays ?? 90,
    ...(opts.now ? { now: opts.now } : {}),
  });
  const flavors = await session.nova.listFlavors();
  const { snapshot } = rec;

  const groups = new Map<string, Host[]>();
  for (const h of snapshot.hosts) {
    for (const a of h.aggregates.length ? h.aggregates : [UNASSIGNED])
      groups.set(a, [...(groups.get(a) ?? []), h]);
  }
  const serversOn = new Map<string, Server[]>();
  for (const s of snapshot.servers) serversOn.set(s.host, [...(serversOn.get(s.host) ?? []), s]);

  const badFlavors = new Map<string, string[]>();
  for (const f of flavors) {
    const reasons = nonMigratableReasons(f.extraSpecs);
    if (reasons.length) badFlavors.set(f.name, reasons);
  }

  const probes = new Map<string, RatioProbeResult>();
  if (opts.probeRatios) {
    const chosen = [...groups.entries()].flatMap(([aggregate, hosts]) => {
      const h = hosts.find(
        (x) => x.service.state === 'up' && x.service.status === 'enabled' && rec.providers.has(x.name),
      );
      return h ? [{ aggregate, host: h.name, rp: rec.providers.get(h.name)?.uuid ?? '' }] : [];
    });
    const unique = [...new Map(chosen.map((c) => [c.host, c])).values()];
    const found = await Promise.all(
      unique.map((c) => probeRatioOwner(session.placement, c.host, c.rp, opts.probeRatios)),
    );
    for (const c of chosen) {
      const r = found.find((f) => f.host === c.host);
      if (r) probes.set(c.aggregate, r);
    }
  }

  const results: CheckResult[] = [];
  for (const [aggregate, hosts] of [...groups.entries()].sort(([a], [b]) => a.localeCompare(b))) {
    const names = new Set(hosts.map((h) => h.name));
    const servers = hosts.flatMap((h) => serversOn.get(h.name) ?? []);
    const decl = declarationsFor(opts.site, aggregate);
    const add = (r: Omit<CheckResult, 'aggregate'>) => results.push({ aggregate, ...r });

    // Live migration evidence.
    const within = rec.migrations.filter(
      (m) => m.sourceCompute && m.destCompute && names.has(m.sourceCompute) && names.has(m.destCompute),
    );
    const completed = within.filter((m) => m.status === 'completed');
    const failed = within.filter((m) => m.status === 'failed' || m.status === 'error');
    const involved = new Set(completed.flatMap((m) => [m.sourceCompute ?? '', m.destCompute ?? '']));
    const never = [...names].filter((h) => !involved.has(h)).sort();
    const lmWhy =
      'Aicerine only proposes moves it can carry out; a completed live migration between these hosts shows that libvirt, the migration network and the storage agree';
    const lmIfNot =
      'Plans may fail at execution: every move would start and fail, leaving servers where they were';
    if (hosts.length < 2) {
      add({
        id: 'live-migration',
        title: 'live migration works between the hosts',
        status: 'info',
        details: [`only ${hosts.length} host: nothing to move between`],
        why: lmWhy,
        ifNot: lmIfNot,
      });
    } else if (completed.length === 0) {
      add({
        id: 'live-migration',
        title: 'live migration works between the hosts',
        status: 'fail',
        details: [
          `no completed live migration between hosts of this aggregate in os-migrations (${failed.length} failed)`,
          `try one: openstack server migrate --live-migration --host ${[...names].sort()[1]} <server on ${[...names].sort()[0]}>`,
        ],
        why: lmWhy,
        ifNot: lmIfNot,
      });
    } else {
      const details = [
        `${completed.length} completed, ${failed.length} failed live migrations within the aggregate`,
      ];
      if (never.length) details.push(`hosts with no completed migration yet: ${list(never)}`);
      add({
        id: 'live-migration',
        title: 'live migration works between the hosts',
        status: 'ok',
        details,
        why: lmWhy,
        ifNot: lmIfNot,
      });
    }

    // Storage.
    const local = servers.filter((s) => !s.sharedStorage);
    const undeclared = servers.filter(
      (s) =>
        (rec.storage.get(s.id)?.because ?? '').startsWith('storage policy default') && !opts.site?.storage,
    );
    const storageDetails = [
      storageDeclaration(aggregate, rec.aggregates, opts.site?.storage),
      `${servers.length - local.length} on shared storage, ${local.length} on local disk (never moved)`,
    ];
    if (local.length) storageDetails.push(`local: ${list(local.map((s) => s.name || s.id))}`);
    if (undeclared.length) {
      storageDetails.push(
        `${undeclared.length} servers are local only because nothing declares their storage: set aggregate metadata aicerine:shared_storage=true|false, or "storage" in the site file`,
      );
    }
    add({
      id: 'storage',
      title: 'where server disks live is declared',
      status: undeclared.length ? 'fail' : 'ok',
      details: storageDetails,
      why: 'Nova cannot tell shared from local ephemeral disks; a local disk must be copied (block migration), which Aicerine keeps out of scope',
      ifNot: 'Undeclared servers are treated as local and never moved, so plans cannot balance them',
    });

    // Flavors and ports that pin a guest to its host.
    const pinned = servers.filter(
      (s) => badFlavors.has(s.flavor.name) || nonMigratableReasons(s.flavor.extraSpecs ?? {}).length > 0,
    );
    const sriov = servers.filter((s) => s.sriov === true);
    const usedBad = [...new Set(pinned.map((s) => s.flavor.name))].sort();
    const flavorDetails = usedBad.map(
      (f) =>
        `flavor ${f}: ${(badFlavors.get(f) ?? nonMigratableReasons(pinned.find((s) => s.flavor.name === f)?.flavor.extraSpecs ?? {})).join('; ')} (${pinned.filter((s) => s.flavor.name === f).length} servers)`,
    );
    if (sriov.length)
      flavorDetails.push(
        `${sriov.length} servers with SR-IOV ports: ${list(sriov.map((s) => s.name || s.id))}`,
      );
    if (servers.every((s) => s.sriov === undefined) && servers.length)
      flavorDetails.push('SR-IOV ports unknown (Neutron not readable)');
    if (flavorDetails.length === 0)
      flavorDetails.push('no server uses a non-migratable flavor or SR-IOV port');
    add({
      id: 'migratable-flavors',
      title: 'servers pinned to their host are known',
      status: 'info',
      details: flavorDetails,
      why: 'PCI passthrough, SR-IOV, dedicated CPUs, NUMA topology, huge pages and vGPUs tie a guest to host hardware; their live migration is unsupported or fragile',
      ifNot: 'These servers are never moved; their hosts can only be balanced by moving others',
    });

    // Ratios pinned by nova.conf.
    const pinnedConf = decl.cpuAllocationRatioInNovaConf;
    const probe = probes.get(aggregate);
    const probeLine = probe
      ? probe.pinned
        ? `probe on ${probe.host}: ratio set to ${probe.probe} was rewritten to ${probe.observed} within ${Math.round(probe.waitedMs / 1000)} s (nova.conf owns it)`
        : `probe on ${probe.host}: ratio set to ${probe.probe} stayed for ${Math.round(probe.waitedMs / 1000)} s (Placement owns it); restored to ${probe.original}`
      : undefined;
    const owned = probe ? !probe.pinned && pinnedConf !== true : pinnedConf === false;
    add({
      id: 'ratio-owner',
      title: 'Placement owns the VCPU allocation ratio (not nova.conf)',
      status: owned ? 'ok' : 'fail',
      details: [
        ...(probeLine ? [probeLine] : []),
        pinnedConf === undefined
          ? 'not declared: set cpuAllocationRatioInNovaConf in the site file (false once cpu_allocation_ratio is unset and initial_cpu_allocation_ratio is used)'
          : pinnedConf
            ? 'declared: nova.conf sets cpu_allocation_ratio on these hosts'
            : 'declared: nova.conf leaves cpu_allocation_ratio unset',
        `current VCPU ratios: ${list([...new Set(hosts.map((h) => String(h.inventory.VCPU?.allocationRatio ?? '?')))].sort())}`,
      ],
      why: 'When nova.conf sets cpu_allocation_ratio, nova-compute writes it back to Placement every periodic update',
      ifNot:
        'A ratio Aicerine writes is silently reverted within a minute; plans built on it overcommit or fail',
    });

    // Maintenance windows.
    const windows = decl.maintenanceWindows ?? [];
    add({
      id: 'maintenance-windows',
      title: 'maintenance windows are declared',
      status: windows.length ? 'ok' : 'fail',
      details: windows.length
        ? windows.map((w) => w.text)
        : ['none declared for this aggregate (site file: maintenanceWindows)'],
      why: 'Live migrations cost bandwidth and briefly pause guests; operators choose when that is acceptable',
      ifNot: 'Aicerine has no time it may act in and will only plan, never execute',
    });

    // Ratio bounds.
    const bounds = decl.ratioBounds;
    if (!bounds || Object.keys(bounds).length === 0) {
      add({
        id: 'ratio-bounds',
        title: 'allocation ratio bounds are declared and hold',
        status: 'fail',
        details: ['no ratioBounds declared (site file: ratioBounds: {VCPU: {min, max}})'],
        why: 'Aicerine may change allocation ratios only within limits the operator accepts',
        ifNot: 'Aicerine never changes a ratio, and cannot tell whether the current ones are sane',
      });
    } else {
      const out: string[] = [];
      for (const h of hosts) {
        for (const [rc, b] of Object.entries(bounds)) {
          const r = h.inventory[rc]?.allocationRatio;
          if (r !== undefined && (r < b.min || r > b.max))
            out.push(`${h.name} ${rc} ratio ${r} outside [${b.min}, ${b.max}]`);
        }
      }
      add({
        id: 'ratio-bounds',
        title: 'allocation ratio bounds are declared and hold',
        status: out.length ? 'fail' : 'ok',
        details: out.length
          ? out
          : Object.entries(bounds).map(([rc, b]) => `${rc} within [${b.min}, ${b.max}] on every host`),
        why: 'Aicerine may change allocation ratios only within limits the operator accepts',
        ifNot: 'Hosts outside the bounds are over- or under-committed already; fix them before planning',
      });
    }

    // Host state.
    const unusable = hosts.filter(
      (h) => h.service.state !== 'up' || h.service.status !== 'enabled' || h.service.forcedDown,
    );
    add({
      id: 'hosts',
      title: 'hosts are up and enabled',
      status: 'info',
      details: unusable.length
        ? unusable.map(
            (h) =>
              `${h.name}: ${h.service.state}, ${h.service.status}${h.service.forcedDown ? ', forced down' : ''}${h.service.disabledReason ? ` (${h.service.disabledReason})` : ''}`,
          )
        : [`all ${hosts.length} hosts up and enabled`],
      why: 'Disabled hosts are evacuated by plans; down hosts are neither sources nor destinations',
      ifNot: 'Servers on down hosts cannot be moved until the host is back',
    });
  }
  return { results, allHold: results.every((r) => r.status !== 'fail'), warnings: rec.warnings };
}

/**
 * How the aggregate's storage is declared, in one line: servers of an undeclared aggregate count
 * as local storage (never moved) unless a flavor or a volume says otherwise, which an operator
 * must hear before wondering why nothing moves.
 */
export function storageDeclaration(
  aggregate: string,
  novaAggregates: readonly { name: string; metadata: Record<string, string> }[],
  site: StoragePolicy | undefined,
): string {
  const meta = novaAggregates.find((a) => a.name === aggregate)?.metadata[SHARED_STORAGE_KEY];
  if (meta !== undefined) return `storage declared by aggregate metadata ${SHARED_STORAGE_KEY}=${meta}`;
  const rule = site?.aggregates?.[aggregate];
  if (rule !== undefined) return `storage declared ${rule} by the site file's storage.aggregates`;
  if (site !== undefined) return `storage declared ${site.default} by the site file's storage.default`;
  return `treated as local storage: nothing declares this aggregate's storage (no ${SHARED_STORAGE_KEY} metadata, no "storage" in the site file), so only volume-backed servers and flavors with ${SHARED_STORAGE_KEY}=true can move`;
}

export function formatReport(report: CheckReport): string {
  const lines: string[] = [];
  let current = '';
  for (const r of report.results) {
    if (r.aggregate !== current) {
      current = r.aggregate;
      // The credential checks come after the aggregates, under their own heading.
      lines.push(current === 'credentials' ? 'credentials' : `aggregate ${current}`);
    }
    const mark = r.status === 'ok' ? 'ok  ' : r.status === 'fail' ? 'FAIL' : 'info';
    lines.push(`  [${mark}] ${r.title}`);
    for (const d of r.details) lines.push(`         ${d}`);
    if (r.status !== 'ok') {
      lines.push(`         why: ${r.why}`);
      lines.push(`         if not: ${r.ifNot}`);
    }
  }
  const failed = report.results.filter((r) => r.status === 'fail').length;
  lines.push(report.allHold ? 'all preconditions hold' : `${failed} preconditions do not hold`);
  return `${lines.join('\n')}\n`;
}
