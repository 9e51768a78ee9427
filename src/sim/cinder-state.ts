// Cinder's volumes and snapshots as the simulator keeps them: enough for a client that deletes
// a project's storage to meet what real Cinder puts in its way (statuses that refuse a delete,
// attachments that Nova drops only after its server is gone, snapshots that need `cascade`,
// deletions that take time and may fail). Lists keep Cinder's default order (newest first).
import { stableUuid } from './ids.js';
import { type SimCloud, SimError } from './model.js';

export const VOLUME_STATUSES = [
  'creating',
  'available',
  'reserved',
  'attaching',
  'detaching',
  'in-use',
  'maintenance',
  'deleting',
  'awaiting-transfer',
  'error',
  'error_deleting',
  'backing-up',
  'restoring-backup',
  'error_backing-up',
  'error_restoring',
  'error_extending',
  'downloading',
  'uploading',
  'retyping',
  'extending',
] as const;
export type VolumeStatus = (typeof VOLUME_STATUSES)[number];

export const SNAPSHOT_STATUSES = [
  'creating',
  'available',
  'backing-up',
  'deleting',
  'error',
  'error_deleting',
  'restoring',
  'unmanaging',
] as const;
export type SnapshotStatus = (typeof SNAPSHOT_STATUSES)[number];

/**
 * The statuses Cinder's volume API deletes from without `force` (cinder/volume/api.py
 * `delete`; it also lists error_managing, which its API shows as `error`). Not `in-use`,
 * whatever the API reference says: the code also requires the volume not attached.
 */
export const DELETABLE_VOLUME_STATUSES: readonly VolumeStatus[] = [
  'available',
  'error',
  'error_restoring',
  'error_extending',
];

/** Snapshot statuses a cascading delete accepts (anything else makes the volume undeletable). */
const CASCADE_SNAPSHOT_STATUSES: readonly SnapshotStatus[] = ['available', 'error'];

/** Cinder's one refusal for every delete precondition (InvalidVolume, 400). */
export const VOLUME_DELETE_REFUSED =
  'Invalid volume: Volume status must be available or error or error_restoring or error_extending or ' +
  'error_managing and must not be migrating, attached, belong to a group, have snapshots, awaiting a ' +
  'transfer, or be disassociated from snapshots after volume transfer.';

export interface SimVolumeAttachment {
  id: string;
  volumeId: string;
  serverId: string;
  /** The compute host (shown to admins as host_name). */
  hostName: string;
  device: string;
  attachedMs: number;
  /** Nova's block device mapping flag: Nova deletes the volume after detaching it. */
  deleteOnTermination: boolean;
  /** The server boots from it (Nova then shows it instead of the simulator's implicit boot volume). */
  boot: boolean;
}

export interface SimVolume {
  id: string;
  name: string;
  description: string | null;
  projectId: string;
  userId: string;
  sizeGB: number;
  status: VolumeStatus;
  bootable: boolean;
  metadata: Record<string, string>;
  createdMs: number;
  updatedMs: number;
  attachments: SimVolumeAttachment[];
}

export interface SimVolumeSnapshot {
  id: string;
  name: string;
  description: string | null;
  volumeId: string;
  projectId: string;
  userId: string;
  sizeGB: number;
  status: SnapshotStatus;
  createdMs: number;
  updatedMs: number;
}

export interface NewVolume {
  name: string;
  projectId: string;
  /** GiB, default 1. */
  sizeGB?: number;
  id?: string;
  userId?: string;
  description?: string | null;
  /** Default `available` (`in-use` when attached); a seed may give any status, e.g. `error`. */
  status?: VolumeStatus;
  bootable?: boolean;
  metadata?: Record<string, string>;
  /** A server (uuid) the volume is attached to. */
  attachedTo?: string;
  deleteOnTermination?: boolean;
  /** Attached as the server's boot volume. */
  boot?: boolean;
}

export interface NewSnapshot {
  volumeId: string;
  name: string;
  id?: string;
  /** Default `available`; `creating` makes even a cascading delete of its volume refused. */
  status?: SnapshotStatus;
}

/** Who asks: an admin sees and deletes every project's volumes, others their project's only. */
export interface CinderCaller {
  projectId: string;
  admin: boolean;
}

const byNewest = (a: { createdMs: number; id: string }, b: { createdMs: number; id: string }): number =>
  b.createdMs - a.createdMs || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);

function insertNewestFirst<T extends { createdMs: number; id: string }>(list: T[], item: T): void {
  let i = 0;
  while (i < list.length && byNewest(list[i] as T, item) < 0) i++;
  list.splice(i, 0, item);
}

export class CinderState {
  /** Cinder's default list order: created_at, then id, both descending. */
  readonly volumes: SimVolume[] = [];
  readonly volumesById = new Map<string, SimVolume>();
  readonly snapshots: SimVolumeSnapshot[] = [];
  readonly snapshotsById = new Map<string, SimVolumeSnapshot>();
  /** Server uuid -> its attachments, so a page of Nova servers does not scan every volume. */
  private readonly attachedTo = new Map<string, SimVolumeAttachment[]>();
  /** Deletions of these volumes end in `error_deleting`, as a failing back end leaves them. */
  readonly failDeletes = new Set<string>();
  /** cinder.conf `osapi_max_limit`: the most a list answers at once, whatever `limit` asks. */
  maxLimit = 1000;
  private seq = 0;

  constructor(private readonly cloud: SimCloud) {}

  /** A volume as a seed or `POST /volumes` makes it (`creating` first when `viaApi`). */
  createVolume(req: NewVolume, viaApi = false): SimVolume {
    this.cloud.sync();
    const size = req.sizeGB ?? 1;
    if (!Number.isInteger(size) || size < 1)
      throw new SimError(400, `sizeGB: expected an integer >= 1, got ${JSON.stringify(req.sizeGB)}`);
    if (typeof req.projectId !== 'string' || req.projectId === '')
      throw new SimError(400, `projectId: expected a project id, got ${JSON.stringify(req.projectId)}`);
    if (req.status !== undefined && !VOLUME_STATUSES.includes(req.status))
      throw new SimError(400, `status: expected one of ${VOLUME_STATUSES.join(', ')}, got ${req.status}`);
    const server = req.attachedTo === undefined ? undefined : this.cloud.requireServer(req.attachedTo);
    if (server && req.status !== undefined && req.status !== 'in-use')
      throw new SimError(400, `status: an attached volume is in-use, got ${req.status}`);
    const id = req.id ?? stableUuid(this.cloud.seed, 'cinder-volume', ++this.seq, req.name);
    if (this.volumesById.has(id)) throw new SimError(409, `Volume ${id} already exists.`);
    const now = this.cloud.nowMs();
    const v: SimVolume = {
      id,
      name: req.name,
      description: req.description ?? null,
      projectId: req.projectId,
      userId: req.userId ?? server?.userId ?? req.projectId,
      sizeGB: size,
      status: viaApi ? 'creating' : (req.status ?? (server ? 'in-use' : 'available')),
      bootable: req.bootable ?? req.boot ?? false,
      metadata: { ...(req.metadata ?? {}) },
      createdMs: now,
      updatedMs: now,
      attachments: [],
    };
    if (server) {
      const onServer = this.attachedTo.get(server.uuid) ?? [];
      const a: SimVolumeAttachment = {
        id: stableUuid(this.cloud.seed, 'cinder-attachment', id, server.uuid),
        volumeId: id,
        serverId: server.uuid,
        hostName: server.host,
        // vda is the image disk of a server that boots from one.
        device: `/dev/vd${String.fromCharCode(98 + onServer.length)}`,
        attachedMs: now,
        deleteOnTermination: req.deleteOnTermination ?? false,
        boot: req.boot ?? false,
      };
      v.attachments.push(a);
      this.attachedTo.set(server.uuid, [...onServer, a]);
    }
    insertNewestFirst(this.volumes, v);
    this.volumesById.set(id, v);
    this.cloud.projects.add(v.projectId);
    if (viaApi) {
      this.cloud.at(now + this.cloud.timing.volumeCreateSeconds * 1000, () => {
        if (v.status !== 'creating') return;
        v.status = 'available';
        v.updatedMs = this.cloud.nowMs();
      });
    }
    return v;
  }

  createSnapshot(req: NewSnapshot): SimVolumeSnapshot {
    this.cloud.sync();
    const v = this.volumesById.get(req.volumeId);
    if (!v) throw new SimError(404, `Volume ${req.volumeId} could not be found.`);
    if (req.status !== undefined && !SNAPSHOT_STATUSES.includes(req.status))
      throw new SimError(400, `status: expected one of ${SNAPSHOT_STATUSES.join(', ')}, got ${req.status}`);
    const id = req.id ?? stableUuid(this.cloud.seed, 'cinder-snapshot', ++this.seq, req.name);
    if (this.snapshotsById.has(id)) throw new SimError(409, `Snapshot ${id} already exists.`);
    const now = this.cloud.nowMs();
    const s: SimVolumeSnapshot = {
      id,
      name: req.name,
      description: null,
      volumeId: v.id,
      projectId: v.projectId,
      userId: v.userId,
      sizeGB: v.sizeGB,
      status: req.status ?? 'available',
      createdMs: now,
      updatedMs: now,
    };
    insertNewestFirst(this.snapshots, s);
    this.snapshotsById.set(id, s);
    return s;
  }

  /** A volume the caller may see, or Cinder's 404 (another project's volume is "not found"). */
  visibleVolume(id: string, caller: CinderCaller): SimVolume {
    const v = this.volumesById.get(id);
    if (!v || (!caller.admin && v.projectId !== caller.projectId))
      throw new SimError(404, `Volume ${id} could not be found.`);
    return v;
  }

  snapshotsOf(volumeId: string): SimVolumeSnapshot[] {
    return this.snapshots.filter((s) => s.volumeId === volumeId);
  }

  /** Attachments to a server, for Nova's `volumes_attached`. */
  attachmentsOf(serverId: string): readonly SimVolumeAttachment[] {
    return this.attachedTo.get(serverId) ?? [];
  }

  /**
   * DELETE /volumes/{id}: the checks of Cinder's volume API (status, attachments, snapshots
   * unless `cascade` and all deletable), then `deleting` at once and gone after
   * `volumeDeleteSeconds` (its snapshots first), or `error_deleting` if the back end fails.
   */
  deleteVolume(id: string, caller: CinderCaller, cascade: boolean): void {
    this.cloud.sync();
    const v = this.visibleVolume(id, caller);
    const snaps = this.snapshotsOf(v.id);
    const refused =
      !DELETABLE_VOLUME_STATUSES.includes(v.status) ||
      v.attachments.length > 0 ||
      (cascade ? snaps.some((s) => !CASCADE_SNAPSHOT_STATUSES.includes(s.status)) : snaps.length > 0);
    if (refused) throw new SimError(400, VOLUME_DELETE_REFUSED);
    const now = this.cloud.nowMs();
    v.status = 'deleting';
    v.updatedMs = now;
    for (const s of snaps) {
      s.status = 'deleting';
      s.updatedMs = now;
    }
    this.cloud.at(now + this.cloud.timing.volumeDeleteSeconds * 1000, () => {
      for (const s of snaps) this.dropSnapshot(s);
      if (this.failDeletes.has(v.id)) {
        v.status = 'error_deleting';
        v.updatedMs = this.cloud.nowMs();
        return;
      }
      this.volumes.splice(this.volumes.indexOf(v), 1);
      this.volumesById.delete(v.id);
    });
  }

  /**
   * Nova deleted a server: its volumes go `detaching`, and `volumeDetachSeconds` later
   * `available` without the attachment; those marked delete_on_termination are then deleted as
   * Nova's compute asks (no cascade: one with snapshots is refused and stays, as Nova only logs it).
   */
  serverDeleted(serverId: string): void {
    const now = this.cloud.nowMs();
    const attachments = this.attachmentsOf(serverId);
    for (const a of attachments) {
      const v = this.volumesById.get(a.volumeId);
      if (!v) continue;
      v.status = 'detaching';
      v.updatedMs = now;
      this.cloud.at(now + this.cloud.timing.volumeDetachSeconds * 1000, () => {
        v.attachments = v.attachments.filter((x) => x !== a);
        const left = this.attachmentsOf(serverId).filter((x) => x !== a);
        if (left.length > 0) this.attachedTo.set(serverId, left);
        else this.attachedTo.delete(serverId);
        if (!this.volumesById.has(v.id)) return;
        if (v.status === 'detaching') v.status = v.attachments.length > 0 ? 'in-use' : 'available';
        v.updatedMs = this.cloud.nowMs();
        if (!a.deleteOnTermination) return;
        try {
          this.deleteVolume(v.id, { projectId: v.projectId, admin: true }, false);
        } catch (e) {
          if (!(e instanceof SimError)) throw e;
        }
      });
    }
  }

  private dropSnapshot(s: SimVolumeSnapshot): void {
    const i = this.snapshots.indexOf(s);
    if (i >= 0) this.snapshots.splice(i, 1);
    this.snapshotsById.delete(s.id);
  }
}
