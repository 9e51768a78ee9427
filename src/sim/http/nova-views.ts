// Nova's JSON views, per microversion, for the resources the simulator serves.
import { createHash } from 'node:crypto';
import { novaTime } from '../clock.js';
import { stableUuid } from '../ids.js';
import { memoryProgress } from '../migrations.js';
import type {
  SimAggregate,
  SimCloud,
  SimFlavor,
  SimGroup,
  SimHost,
  SimMigration,
  SimServer,
} from '../model.js';
import { SIM_IMAGE_ID } from './glance.js';
import { atLeast, type Version } from './microversion.js';

export interface ViewCtx {
  cloud: SimCloud;
  version: Version;
  /** http://127.0.0.1:PORT/compute */
  base: string;
}

/** Nova's "created"/"updated" style for servers: seconds and Z. */
function isoZ(ms: number): string {
  return `${new Date(Math.floor(ms)).toISOString().slice(0, 19)}Z`;
}

function links(v: ViewCtx, kind: string, id: string | number): { href: string; rel: string }[] {
  return [
    { href: `${v.base}/v2.1/${kind}/${id}`, rel: 'self' },
    { href: `${v.base}/${kind}/${id}`, rel: 'bookmark' },
  ];
}

export function flavorView(v: ViewCtx, f: SimFlavor, detail: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = { id: f.id, links: links(v, 'flavors', f.id), name: f.name };
  if (atLeast(v.version, 2, 55)) out.description = null;
  if (!detail) return out;
  Object.assign(out, {
    'OS-FLV-DISABLED:disabled': false,
    disk: f.disk,
    'OS-FLV-EXT-DATA:ephemeral': 0,
    'os-flavor-access:is_public': f.isPublic ?? true,
    ram: f.ram,
    swap: atLeast(v.version, 2, 75) ? 0 : '',
    vcpus: f.vcpus,
    rxtx_factor: 1.0,
  });
  if (atLeast(v.version, 2, 61)) out.extra_specs = { ...f.extraSpecs };
  return out;
}

function embeddedFlavor(v: ViewCtx, f: SimFlavor): Record<string, unknown> {
  if (!atLeast(v.version, 2, 47)) {
    return { id: f.id, links: [{ href: `${v.base}/flavors/${f.id}`, rel: 'bookmark' }] };
  }
  return {
    vcpus: f.vcpus,
    ram: f.ram,
    disk: f.disk,
    ephemeral: 0,
    swap: 0,
    original_name: f.name,
    extra_specs: { ...f.extraSpecs },
  };
}

interface ServerMemo {
  host: string;
  hostId: string;
  created: string;
  launched: string;
  volumeId: string;
  updatedMs: number;
  updated: string;
}

// Derived strings (hashes, timestamps) cost more than the rest of a view; a page of 1,000
// servers recomputes them only for servers that changed.
const serverMemo = new WeakMap<SimServer, ServerMemo>();

function memoOf(s: SimServer): ServerMemo {
  let m = serverMemo.get(s);
  if (!m) {
    m = {
      host: '',
      hostId: '',
      created: isoZ(s.createdMs),
      launched: `${new Date(s.createdMs + 5000).toISOString().slice(0, 19)}.000000`,
      volumeId: stableUuid('volume', s.uuid),
      updatedMs: Number.NaN,
      updated: '',
    };
    serverMemo.set(s, m);
  }
  if (m.host !== s.host) {
    m.host = s.host;
    m.hostId = createHash('sha224').update(`${s.projectId}${s.host}`).digest('hex');
  }
  if (m.updatedMs !== s.updatedMs) {
    m.updatedMs = s.updatedMs;
    m.updated = isoZ(s.updatedMs);
  }
  return m;
}

/**
 * The server's Cinder attachments; a shared-storage server without a seeded boot volume shows
 * the implicit one it boots from (not a Cinder volume), which is how `record` tells it apart.
 */
function volumesAttached(v: ViewCtx, s: SimServer, memo: ServerMemo): Record<string, unknown>[] {
  if (s.status === 'DELETED') return [];
  const attached = v.cloud.cinder.attachmentsOf(s.uuid);
  const list = attached.map((a) => ({ id: a.volumeId, deleteOnTermination: a.deleteOnTermination }));
  if (s.sharedStorage && !attached.some((a) => a.boot))
    list.unshift({ id: memo.volumeId, deleteOnTermination: false });
  return list.map((x) =>
    atLeast(v.version, 2, 3) ? { id: x.id, delete_on_termination: x.deleteOnTermination } : { id: x.id },
  );
}

export function serverView(
  v: ViewCtx,
  s: SimServer,
  detail: boolean,
  admin: boolean,
): Record<string, unknown> {
  const base: Record<string, unknown> = { id: s.uuid, links: links(v, 'servers', s.uuid), name: s.name };
  if (!detail) return base;
  const host = v.cloud.hostsByName.get(s.host);
  const memo = memoOf(s);
  const out: Record<string, unknown> = {
    'OS-DCF:diskConfig': 'MANUAL',
    'OS-EXT-AZ:availability_zone': host?.az ?? 'nova',
    'OS-EXT-STS:power_state': s.powerState,
    'OS-EXT-STS:task_state': s.taskState,
    'OS-EXT-STS:vm_state': s.vmState,
    'OS-SRV-USG:launched_at': memo.launched,
    'OS-SRV-USG:terminated_at': null,
    accessIPv4: '',
    accessIPv6: '',
    addresses: {},
    config_drive: '',
    created: memo.created,
    flavor: embeddedFlavor(v, s.flavor),
    hostId: memo.hostId,
    id: s.uuid,
    // Servers on shared storage boot from a volume; local-disk servers from an image.
    image: s.sharedStorage
      ? ''
      : {
          id: SIM_IMAGE_ID,
          links: [{ href: `${v.base}/images/${SIM_IMAGE_ID}`, rel: 'bookmark' }],
        },
    key_name: null,
    links: base.links,
    metadata: { ...s.metadata },
    name: s.name,
    'os-extended-volumes:volumes_attached': volumesAttached(v, s, memo),
    progress: 0,
    status: s.status,
    tenant_id: s.projectId,
    updated: memo.updated,
    user_id: s.userId,
  };
  if (admin) {
    // A server the scheduler placed nowhere has no host.
    out['OS-EXT-SRV-ATTR:host'] = s.host || null;
    out['OS-EXT-SRV-ATTR:hypervisor_hostname'] = s.host || null;
    out['OS-EXT-SRV-ATTR:instance_name'] = s.instanceName;
    if (atLeast(v.version, 2, 3)) {
      Object.assign(out, {
        'OS-EXT-SRV-ATTR:hostname': s.name.toLowerCase().replace(/[^a-z0-9-]/g, '-'),
        'OS-EXT-SRV-ATTR:kernel_id': '',
        'OS-EXT-SRV-ATTR:launch_index': 0,
        'OS-EXT-SRV-ATTR:ramdisk_id': '',
        'OS-EXT-SRV-ATTR:reservation_id': `r-${s.uuid.slice(0, 8)}`,
        'OS-EXT-SRV-ATTR:root_device_name': '/dev/vda',
        'OS-EXT-SRV-ATTR:user_data': null,
      });
    }
  }
  if (s.fault && (s.status === 'ERROR' || s.status === 'DELETED')) {
    out.fault = { code: s.fault.code, created: novaTime(s.fault.createdMs), message: s.fault.message };
  }
  if (atLeast(v.version, 2, 9)) out.locked = false;
  if (atLeast(v.version, 2, 16)) {
    const h = v.cloud.hostsByName.get(s.host);
    out.host_status = !h
      ? ''
      : v.cloud.serviceState(h) === 'down'
        ? 'DOWN'
        : h.status === 'disabled'
          ? 'MAINTENANCE'
          : 'UP';
  }
  if (atLeast(v.version, 2, 19)) out.description = null;
  if (atLeast(v.version, 2, 26)) out.tags = [];
  if (atLeast(v.version, 2, 63)) out.trusted_image_certificates = null;
  if (atLeast(v.version, 2, 73)) out.locked_reason = null;
  return out;
}

export function serviceView(v: ViewCtx, svc: ServiceRow): Record<string, unknown> {
  const out: Record<string, unknown> = {
    id: atLeast(v.version, 2, 53) ? svc.uuid : svc.intId,
    binary: svc.binary,
    disabled_reason: svc.disabledReason,
    host: svc.host,
    state: svc.state,
    status: svc.status,
    updated_at: novaTime(svc.updatedMs),
    zone: svc.zone,
  };
  if (atLeast(v.version, 2, 11)) out.forced_down = svc.forcedDown;
  return out;
}

export interface ServiceRow {
  uuid: string;
  intId: number;
  binary: string;
  host: string;
  zone: string;
  state: 'up' | 'down';
  status: 'enabled' | 'disabled';
  disabledReason: string | null;
  forcedDown: boolean;
  updatedMs: number;
  computeHost: SimHost | null;
}

export function serviceRows(cloud: SimCloud): ServiceRow[] {
  const now = cloud.nowMs();
  // Control-plane services of the simulated region: real clouds list them too.
  const rows: ServiceRow[] = ['nova-scheduler', 'nova-conductor'].map((binary, i) => ({
    uuid: stableUuid(cloud.seed, 'service', binary),
    intId: i + 1,
    binary,
    host: 'controller',
    zone: 'internal',
    state: 'up',
    status: 'enabled',
    disabledReason: null,
    forcedDown: false,
    updatedMs: now - 3000,
    computeHost: null,
  }));
  for (const h of cloud.hosts) rows.push(computeServiceRow(cloud, h));
  return rows;
}

export function computeServiceRow(cloud: SimCloud, h: SimHost): ServiceRow {
  const now = cloud.nowMs();
  return {
    uuid: h.serviceUuid,
    intId: h.serviceIntId,
    binary: 'nova-compute',
    host: h.name,
    zone: h.az,
    state: cloud.serviceState(h),
    status: h.status,
    disabledReason: h.disabledReason,
    forcedDown: h.forcedDown,
    // A host that stopped reporting has an old heartbeat.
    updatedMs: h.down ? now - 600_000 : now - 5000,
    computeHost: h,
  };
}

export function hypervisorView(
  v: ViewCtx,
  h: SimHost,
  detail: boolean,
  withServers: boolean,
): Record<string, unknown> {
  const cloud = v.cloud;
  const out: Record<string, unknown> = {
    id: atLeast(v.version, 2, 53) ? h.nodeUuid : h.index + 1,
    hypervisor_hostname: h.name,
    state: cloud.serviceState(h),
    status: h.status,
  };
  if (withServers) {
    out.servers = h.servers.map((o) => {
      const s = cloud.servers[o] as SimServer;
      return { uuid: s.uuid, name: s.instanceName };
    });
  }
  if (!detail) return out;
  out.host_ip = h.hostIp;
  out.hypervisor_type = 'QEMU';
  out.hypervisor_version = 7002000;
  out.service = {
    host: h.name,
    id: atLeast(v.version, 2, 53) ? h.serviceUuid : h.serviceIntId,
    disabled_reason: h.disabledReason,
  };
  if (!atLeast(v.version, 2, 88)) {
    const inv = (rc: string): number => h.rp.inventories.get(rc)?.total ?? 0;
    const used = (rc: string): number => cloud.placement.usageOf(h.rp, rc);
    const cpuInfo = {
      arch: 'x86_64',
      model: 'Cascadelake-Server',
      vendor: 'Intel',
      features: ['avx2', 'vmx'],
      topology: { cores: Math.max(1, Math.floor(inv('VCPU') / 4)), threads: 2, sockets: 2 },
    };
    Object.assign(out, {
      vcpus: inv('VCPU'),
      memory_mb: inv('MEMORY_MB'),
      local_gb: inv('DISK_GB'),
      vcpus_used: used('VCPU'),
      memory_mb_used: used('MEMORY_MB') + (h.rp.inventories.get('MEMORY_MB')?.reserved ?? 0),
      local_gb_used: used('DISK_GB'),
      free_ram_mb: inv('MEMORY_MB') - used('MEMORY_MB') - (h.rp.inventories.get('MEMORY_MB')?.reserved ?? 0),
      free_disk_gb: inv('DISK_GB') - used('DISK_GB'),
      current_workload: 0,
      running_vms: h.servers.length,
      disk_available_least: inv('DISK_GB') - used('DISK_GB'),
      cpu_info: atLeast(v.version, 2, 28) ? cpuInfo : JSON.stringify(cpuInfo),
    });
  } else {
    out.uptime = ' 00:00:00 up 42 days,  1:00,  0 users,  load average: 0.00, 0.00, 0.00';
  }
  return out;
}

export function aggregateView(v: ViewCtx, a: SimAggregate): Record<string, unknown> {
  const out: Record<string, unknown> = {
    availability_zone: a.az,
    created_at: novaTime(a.createdMs),
    deleted: false,
    deleted_at: null,
    hosts: [...a.hosts],
    id: a.id,
    metadata: { ...a.metadata },
    name: a.name,
    updated_at: null,
  };
  if (atLeast(v.version, 2, 41)) out.uuid = a.uuid;
  return out;
}

export function serverGroupView(v: ViewCtx, g: SimGroup): Record<string, unknown> {
  const out: Record<string, unknown> = { id: g.uuid, name: g.name, members: [...g.members] };
  if (atLeast(v.version, 2, 64)) {
    out.policy = g.policy;
    out.rules = { ...g.rules };
  } else {
    out.policies = [g.policy];
    out.metadata = {};
  }
  if (atLeast(v.version, 2, 13)) {
    out.project_id = g.projectId;
    out.user_id = g.userId;
  }
  return out;
}

const IN_PROGRESS = new Set(['queued', 'preparing', 'running']);

export function isInProgressLive(m: SimMigration): boolean {
  return m.type === 'live-migration' && IN_PROGRESS.has(m.status);
}

export function migrationView(v: ViewCtx, m: SimMigration): Record<string, unknown> {
  const dest = m.dest ? v.cloud.hostsByName.get(m.dest) : undefined;
  const out: Record<string, unknown> = {
    created_at: novaTime(m.createdMs),
    dest_compute: m.dest,
    dest_host: dest?.hostIp ?? null,
    dest_node: m.dest,
    id: m.id,
    instance_uuid: m.server.uuid,
    new_instance_type_id: m.flavorIntId,
    old_instance_type_id: m.flavorIntId,
    source_compute: m.source,
    // Nova fills the nodes in once the scheduler has picked the destination.
    source_node: m.dest === null ? null : m.source,
    status: m.status,
    updated_at: m.updatedMs === null ? null : novaTime(m.updatedMs),
  };
  if (atLeast(v.version, 2, 23)) {
    out.migration_type = m.type;
    if (isInProgressLive(m)) out.links = links(v, `servers/${m.server.uuid}/migrations`, m.id);
  }
  if (atLeast(v.version, 2, 59)) out.uuid = m.uuid;
  if (atLeast(v.version, 2, 80)) {
    out.user_id = m.userId;
    out.project_id = m.projectId;
  }
  return out;
}

export function serverMigrationView(v: ViewCtx, m: SimMigration): Record<string, unknown> {
  const dest = m.dest ? v.cloud.hostsByName.get(m.dest) : undefined;
  // Nova fills these from the driver's job info; the lab's fake driver never does.
  const mem = v.cloud.migrationProgress ? memoryProgress(v.cloud, m) : null;
  const out: Record<string, unknown> = {
    created_at: novaTime(m.createdMs),
    dest_compute: m.dest,
    dest_host: dest?.hostIp ?? null,
    dest_node: m.dest,
    disk_processed_bytes: mem && 0,
    disk_remaining_bytes: mem && 0,
    disk_total_bytes: mem && 0,
    id: m.id,
    memory_processed_bytes: mem?.processed ?? null,
    memory_remaining_bytes: mem?.remaining ?? null,
    memory_total_bytes: mem?.total ?? null,
    server_uuid: m.server.uuid,
    source_compute: m.source,
    source_node: m.source,
    status: m.status,
    updated_at: m.updatedMs === null ? null : novaTime(m.updatedMs),
  };
  if (atLeast(v.version, 2, 59)) out.uuid = m.uuid;
  if (atLeast(v.version, 2, 80)) {
    out.user_id = m.userId;
    out.project_id = m.projectId;
  }
  return out;
}
