// Turns a VMR2L rescheduling instance (ByteDance; ../shared/traces/vmr2l-bytedance/SOURCE.md)
// into a snapshot: real hosts, VM types and placements, host-level anti-affinity, pinned VMs.
// What has no Nova equivalent (NUMA layout, rack-level sets) is left out and reported.
import { z } from 'zod';
import { InputError, type InputIssue } from '../errors.js';
import { nonEmpty, posInt, toInputIssues } from '../formats/schema-helpers.js';
import type { Flavor, Host, Server, ServerGroup, Snapshot } from '../model/snapshot.js';
import { SNAPSHOT_FORMAT } from '../model/snapshot.js';
import type { VmSeries } from '../traces/bitbrains.js';

export interface Vmr2lOptions {
  /** Import only this cluster (cluster_name); default: every cluster, each as one aggregate. */
  cluster?: string;
  /** File name, for error messages and for the snapshot time (a YYYY-MM-DD in the name). */
  file?: string;
  /** The file's last modification time: the snapshot time when the name has no date. */
  fileModified?: Date;
  /**
   * Utilisation series to give the VMs a load (VMR2L has none): VM i of the instance takes
   * series i mod n, and its mean busy-core and memory fractions of that series.
   */
  withLoad?: readonly VmSeries[];
}

export interface Vmr2lImport {
  snapshot: Snapshot;
  /** What was dropped or changed, one line each, for the operator to read. */
  warnings: string[];
}

const flag = z.union([z.boolean(), z.literal(0), z.literal(1)], { error: 'expected true, false, 0 or 1' });

const vmr2lSchema = z.looseObject({
  cluster_list: z
    .array(
      z.looseObject({
        cluster_name: nonEmpty(),
        host_info: z.array(
          z.looseObject({
            node_id: nonEmpty(),
            status: z.enum(['ACTIVE', 'DISABLED', 'OUTAGE']),
            node_cpu: posInt(),
            node_mem_mb: posInt(),
          }),
        ),
        vm_instance: z.array(
          z.looseObject({
            instance_id: nonEmpty(),
            instance_type: nonEmpty(),
            host_id: nonEmpty(),
            allow_migration: flag,
          }),
        ),
        other_requirement: z
          .looseObject({
            deployment_set: z
              .array(z.looseObject({ granularity: z.enum(['host', 'rack']), data: z.array(nonEmpty()) }))
              .optional(),
          })
          .optional(),
      }),
    )
    .min(1, { error: 'expected at least one cluster' }),
  vm_type_list: z.array(
    z.looseObject({ vm_type: nonEmpty(), request_cpu: posInt(), request_mem_mb: posInt() }),
  ),
  general_requirement: z
    .looseObject({ available_zone: nonEmpty().optional(), maximum_migration: z.number().optional() })
    .optional(),
});

type Vmr2lDoc = z.infer<typeof vmr2lSchema>;
type Vmr2lCluster = Vmr2lDoc['cluster_list'][number];

export function importVmr2l(doc: unknown, opts: Vmr2lOptions = {}): Snapshot {
  return importVmr2lWithWarnings(doc, opts).snapshot;
}

export function importVmr2lWithWarnings(doc: unknown, opts: Vmr2lOptions = {}): Vmr2lImport {
  const file = opts.file;
  const parsed = vmr2lSchema.safeParse(doc, { reportInput: true });
  if (!parsed.success) throw new InputError(toInputIssues(parsed.error, doc, file));
  const d = parsed.data;

  const issues: InputIssue[] = [];
  const flavors = new Map<string, Flavor>();
  d.vm_type_list.forEach((t, i) => {
    if (flavors.has(t.vm_type)) {
      issues.push({
        file,
        path: `vm_type_list[${i}].vm_type`,
        message: 'duplicate VM type',
        value: t.vm_type,
      });
    }
    flavors.set(t.vm_type, {
      name: t.vm_type,
      vcpus: t.request_cpu,
      ramMB: t.request_mem_mb,
      diskGB: 0,
      extraSpecs: {},
    });
  });

  const picked = d.cluster_list
    .map((c, index) => ({ c, index }))
    .filter(({ c }) => opts.cluster === undefined || c.cluster_name === opts.cluster);
  if (picked.length === 0) {
    const names = d.cluster_list.map((c) => JSON.stringify(c.cluster_name)).join(', ');
    throw new InputError([
      {
        file,
        path: 'cluster_list',
        message: `no cluster named ${JSON.stringify(opts.cluster)} (clusters: ${names})`,
      },
    ]);
  }

  const az = d.general_requirement?.available_zone ?? 'nova';
  const hosts: Host[] = [];
  const servers: Server[] = [];
  const serverGroups: ServerGroup[] = [];
  const warnings: string[] = [];
  const hostAt = new Map<string, string>();
  const serverAt = new Map<string, string>();
  for (const { c, index } of picked) {
    const before = servers.length;
    importCluster(
      c,
      index,
      { az, flavors, file },
      { hosts, servers, serverGroups, warnings, issues, hostAt, serverAt },
    );
    if (opts.withLoad !== undefined) assignLoads(servers, before, opts.withLoad);
  }
  if (issues.length > 0) throw new InputError(issues);
  if (opts.withLoad !== undefined) sumHostLoads(hosts, servers);
  if (
    picked.some(({ c }) => c.host_info.some((h) => 'numa' in h) || c.vm_instance.some((v) => 'numa' in v))
  ) {
    warnings.push(
      'NUMA layout (host_info[].numa, vm_instance[].numa) ignored: capacity is per host, as in Placement',
    );
  }
  const maxMigrations = d.general_requirement?.maximum_migration;
  if (maxMigrations !== undefined) {
    warnings.push(
      `general_requirement.maximum_migration = ${maxMigrations} is not part of a snapshot: give it to the planner as the move budget`,
    );
  }

  const cluster = opts.cluster === undefined ? '' : `:${opts.cluster}`;
  return {
    snapshot: {
      format: SNAPSHOT_FORMAT,
      takenAt: takenAtOf(opts),
      source: `trace:vmr2l${cluster}`,
      hosts,
      servers,
      serverGroups,
    },
    warnings,
  };
}

interface Sinks {
  hosts: Host[];
  servers: Server[];
  serverGroups: ServerGroup[];
  warnings: string[];
  issues: InputIssue[];
  /** Name -> JSON path of its first appearance, across clusters. */
  hostAt: Map<string, string>;
  serverAt: Map<string, string>;
}

function importCluster(
  c: Vmr2lCluster,
  ci: number,
  ctx: { az: string; flavors: ReadonlyMap<string, Flavor>; file: string | undefined },
  out: Sinks,
): void {
  const { file } = ctx;
  const at = `cluster_list[${ci}]`;
  const firstHost = out.hosts.length;
  const usage = new Map<string, { vcpus: number; ramMB: number; path: string; cpu: number; mem: number }>();
  c.host_info.forEach((h, hi) => {
    const path = `${at}.host_info[${hi}]`;
    const prev = out.hostAt.get(h.node_id);
    if (prev !== undefined) {
      out.issues.push({
        file,
        path: `${path}.node_id`,
        message: `duplicate host (also ${prev})`,
        value: h.node_id,
      });
      return;
    }
    out.hostAt.set(h.node_id, `${path}.node_id`);
    usage.set(h.node_id, { vcpus: 0, ramMB: 0, path, cpu: h.node_cpu, mem: h.node_mem_mb });
    out.hosts.push({
      name: h.node_id,
      availabilityZone: ctx.az,
      aggregates: [c.cluster_name],
      service: serviceOf(h.status),
      inventory: {
        VCPU: { total: h.node_cpu, reserved: 0, allocationRatio: 1 },
        MEMORY_MB: { total: h.node_mem_mb, reserved: 0, allocationRatio: 1 },
      },
      usage: { VCPU: 0, MEMORY_MB: 0 },
    });
  });

  const inCluster = new Set<string>();
  c.vm_instance.forEach((v, vi) => {
    const path = `${at}.vm_instance[${vi}]`;
    const flavor = ctx.flavors.get(v.instance_type);
    const host = usage.get(v.host_id);
    if (flavor === undefined) {
      out.issues.push({
        file,
        path: `${path}.instance_type`,
        message: 'not in vm_type_list',
        value: v.instance_type,
      });
    }
    if (host === undefined) {
      out.issues.push({
        file,
        path: `${path}.host_id`,
        message: `not a host of cluster ${c.cluster_name}`,
        value: v.host_id,
      });
    }
    const prev = out.serverAt.get(v.instance_id);
    if (prev !== undefined) {
      out.issues.push({
        file,
        path: `${path}.instance_id`,
        message: `duplicate VM (also ${prev})`,
        value: v.instance_id,
      });
    }
    if (flavor === undefined || host === undefined || prev !== undefined) return;
    out.serverAt.set(v.instance_id, `${path}.instance_id`);
    inCluster.add(v.instance_id);
    host.vcpus += flavor.vcpus;
    host.ramMB += flavor.ramMB;
    const server: Server = {
      id: v.instance_id,
      name: v.instance_id,
      projectId: c.cluster_name,
      host: v.host_id,
      status: 'ACTIVE',
      taskState: null,
      flavor,
      sharedStorage: true,
    };
    if (v.allow_migration === 0 || v.allow_migration === false)
      server.metadata = { 'aicerine:exclude': 'true' };
    out.servers.push(server);
  });

  for (let i = firstHost; i < out.hosts.length; i++) {
    const h = out.hosts[i] as Host;
    const u = usage.get(h.name);
    if (u === undefined) continue;
    h.usage = { VCPU: u.vcpus, MEMORY_MB: u.ramMB };
    if (u.vcpus > u.cpu) {
      out.issues.push({
        file,
        path: `${u.path}.node_cpu`,
        message: `VMs placed here need ${u.vcpus} vCPUs`,
        value: u.cpu,
      });
    }
    if (u.ramMB > u.mem) {
      out.issues.push({
        file,
        path: `${u.path}.node_mem_mb`,
        message: `VMs placed here need ${u.ramMB} MiB`,
        value: u.mem,
      });
    }
  }

  importDeploymentSets(c, ci, inCluster, out);
}

/** Host-level deployment sets are Nova anti-affinity groups; a server may be in only one. */
function importDeploymentSets(c: Vmr2lCluster, ci: number, inCluster: ReadonlySet<string>, out: Sinks): void {
  const sets = c.other_requirement?.deployment_set ?? [];
  const grouped = new Set<string>();
  let rack = 0;
  let foreign = 0;
  let empty = 0;
  let again = 0;
  sets.forEach((set, si) => {
    if (set.granularity === 'rack') {
      rack++;
      return;
    }
    const members: string[] = [];
    for (const id of set.data) {
      if (!inCluster.has(id)) foreign++;
      else if (grouped.has(id)) again++;
      else {
        grouped.add(id);
        members.push(id);
      }
    }
    if (members.length === 0) {
      empty++;
      return;
    }
    out.serverGroups.push({
      id: `${c.cluster_name}/deployment_set[${si}]`,
      name: `${c.cluster_name}-ds-${si}`,
      policy: 'anti-affinity',
      rules: { max_server_per_host: 1 },
      members,
      projectId: c.cluster_name,
    });
  });
  const at = `cluster_list[${ci}] (${c.cluster_name})`;
  if (rack > 0) {
    out.warnings.push(`${at}: ${rack} rack-level deployment set(s) skipped: Nova has no rack anti-affinity`);
  }
  if (again > 0) {
    out.warnings.push(
      `${at}: ${again} VM(s) in more than one deployment set: each kept in its first set only (Nova allows one server group per server)`,
    );
  }
  if (foreign > 0)
    out.warnings.push(`${at}: ${foreign} deployment-set member(s) are not VMs of this cluster: ignored`);
  if (empty > 0) out.warnings.push(`${at}: ${empty} deployment set(s) with no VM of this cluster: skipped`);
}

function serviceOf(status: 'ACTIVE' | 'DISABLED' | 'OUTAGE'): Host['service'] {
  if (status === 'DISABLED') {
    return { state: 'up', status: 'disabled', forcedDown: false, disabledReason: 'vmr2l: DISABLED' };
  }
  if (status === 'OUTAGE') return { state: 'down', status: 'enabled', forcedDown: false };
  return { state: 'up', status: 'enabled', forcedDown: false };
}

/** Mean busy-core and memory fractions of one series each, scaled to each server's flavor. */
function assignLoads(servers: Server[], from: number, series: readonly VmSeries[]): void {
  if (series.length === 0) return;
  for (let i = from; i < servers.length; i++) {
    const v = servers[i] as Server;
    const s = series[(i - from) % series.length] as VmSeries;
    v.load = {
      cpu: round3(v.flavor.vcpus * clamp01(mean(s.cpuCores) / s.cores)),
      memoryMB: Math.round(v.flavor.ramMB * clamp01(mean(s.memMB) / s.memCapacityMB)),
    };
  }
}

function sumHostLoads(hosts: Host[], servers: readonly Server[]): void {
  const byHost = new Map<string, { cpu: number; memoryMB: number }>();
  for (const h of hosts) byHost.set(h.name, { cpu: 0, memoryMB: 0 });
  for (const v of servers) {
    const l = byHost.get(v.host);
    if (l === undefined || v.load === undefined) continue;
    l.cpu += v.load.cpu ?? 0;
    l.memoryMB += v.load.memoryMB ?? 0;
  }
  for (const h of hosts) {
    const l = byHost.get(h.name) as { cpu: number; memoryMB: number };
    h.load = { cpu: round3(l.cpu), memoryMB: l.memoryMB };
  }
}

/**
 * The instance files carry no time. A date in the file name (as in json_stream_c1_2022-03-28+32c)
 * is when the instance was taken; without one, the file's modification time is the best there is.
 */
function takenAtOf({ file, fileModified }: Vmr2lOptions): string {
  const m = file === undefined ? null : /(\d{4}-\d{2}-\d{2})/.exec(file);
  const date = m?.[1];
  if (date !== undefined && !Number.isNaN(Date.parse(date))) return `${date}T00:00:00Z`;
  if (fileModified !== undefined && !Number.isNaN(fileModified.getTime())) {
    return `${fileModified.toISOString().slice(0, 19)}Z`;
  }
  throw new InputError([
    {
      file,
      path: '',
      message: 'no date for the snapshot: the file name has no YYYY-MM-DD and no modification time was given',
    },
  ]);
}

function mean(a: Float32Array): number {
  if (a.length === 0) return 0;
  let s = 0;
  for (const x of a) s += x;
  return s / a.length;
}

function clamp01(x: number): number {
  return Number.isFinite(x) ? Math.min(1, Math.max(0, x)) : 0;
}

function round3(x: number): number {
  return Math.round(x * 1000) / 1000;
}
