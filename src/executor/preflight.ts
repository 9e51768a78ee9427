// Pre-flight: right before a live migration is asked for, is it still the move the plan meant
// and can Nova carry it out now? Everything is read fresh from Nova and Placement; nothing the
// plan assumed is trusted. A refusal names what was found.
import type { PlannedMove } from './journal.js';
import { matchesFlavor, PlacementReads } from './placement-reads.js';
import { type ComputeServiceView, type ExecutorCloud, type HostRoomView, systemClock } from './ports.js';

export type PreflightResult =
  | { ok: true; need: Record<string, number> }
  | {
      ok: false;
      reason: string;
      /** Nova's fault when the server's own state (ERROR) refused it. */
      serverFault: string | null;
      /** It would fit but for migrations this executor just started there: ask again later. */
      wait: boolean;
    };

const refuse = (reason: string, serverFault: string | null = null, wait = false): PreflightResult => ({
  ok: false,
  reason,
  serverFault,
  wait,
});

/** Capacity as Placement computes it: (total - reserved) x allocation_ratio. */
export function roomProblem(
  host: string,
  room: HostRoomView,
  need: Record<string, number>,
  alreadyComing: Record<string, number>,
): string | null {
  for (const [rc, amount] of Object.entries(need)) {
    if (amount <= 0) continue;
    const inv = room.inventories[rc];
    if (!inv) return `destination ${host} has no ${rc} inventory in Placement`;
    const capacity = (inv.total - inv.reserved) * inv.allocationRatio;
    const used = (room.usages[rc] ?? 0) + (alreadyComing[rc] ?? 0);
    if (used + amount > capacity + 1e-9) {
      const coming = alreadyComing[rc] ? ` (${alreadyComing[rc]} of it from migrations just started)` : '';
      return `no room on ${host} for ${rc}: used ${used}${coming} + needed ${amount} > capacity ${capacity}`;
    }
  }
  return null;
}

/** Where pre-flight gets what it does not read from the cloud itself each time. */
export interface PreflightReads {
  /** A host's nova-compute service (service-reads.ts: a listing a few seconds old). */
  service(host: string): Promise<ComputeServiceView | null>;
  /** Placement: usages now, inventories and source allocations kept a while (placement-reads.ts). */
  placement: PlacementReads;
}

/** Everything read now, one move at a time (no sharing). */
export function directReads(cloud: ExecutorCloud): PreflightReads {
  return {
    service: (h) => cloud.getComputeService(h),
    placement: new PlacementReads(cloud, systemClock, { inventoriesMs: 0, allocationsMs: 0 }),
  };
}

/**
 * Checks one move against the cloud as it is now. `alreadyComing` is what migrations this
 * executor started towards the destination will claim but Placement may not show yet. Every
 * read is asked at once (they change nothing), so a pre-flight costs one round trip; the checks
 * then run in order, and a read that failed only matters when its check is reached. The server
 * is always read now; see placement-reads.ts for why the destination's inventories and the
 * server's allocation may come from an earlier reading.
 */
export async function preflight(
  cloud: ExecutorCloud,
  move: PlannedMove,
  alreadyComing: Record<string, number>,
  reads: PreflightReads = directReads(cloud),
): Promise<PreflightResult> {
  const { placement } = reads;
  const got = await Promise.allSettled([
    cloud.getServer(move.serverId),
    reads.service(move.from),
    reads.service(move.to),
    placement.listedAllocation(move.serverId, move.from),
    placement.inventoriesOf(move.to, false),
    placement.usagesOf(move.to),
  ] as const);
  const s = settled(got[0]);
  if (!s) return refuse(`server ${move.serverId} no longer exists`);
  if (s.status !== 'ACTIVE') {
    return refuse(
      `server is ${s.status}, not ACTIVE${s.fault ? ` (fault: ${s.fault})` : ''}`,
      s.status === 'ERROR' ? (s.fault ?? 'server is in ERROR') : null,
    );
  }
  if (s.taskState !== null) return refuse(`server has task state ${s.taskState}`);
  if (s.host !== move.from) {
    return refuse(
      s.host === move.to
        ? `server is already on its destination ${move.to}`
        : `server is on ${s.host ?? 'no host'}, not on the plan's source ${move.from}`,
    );
  }
  const src = settled(got[1]);
  const dst = settled(got[2]);
  if (!src) return refuse(`source ${move.from} has no nova-compute service`);
  if (!src.up || src.forcedDown) return refuse(`source ${move.from}: nova-compute is down`);
  if (!dst) return refuse(`destination ${move.to} has no nova-compute service`);
  if (dst.forcedDown) return refuse(`destination ${move.to}: nova-compute is forced down`);
  if (!dst.up) return refuse(`destination ${move.to}: nova-compute is down`);
  if (!dst.enabled) {
    return refuse(
      `destination ${move.to} is disabled${dst.disabledReason ? ` (${dst.disabledReason})` : ''}`,
    );
  }
  // The listing of the source's allocations (when it answered and matches the flavor), else the
  // server's own allocation, read now.
  const listed = got[3].status === 'fulfilled' ? got[3].value : undefined;
  const amounts =
    listed !== undefined && matchesFlavor(listed, s.flavor)
      ? listed
      : await cloud.getServerAllocation(move.serverId);
  const inv = settled(got[4]);
  const usages = settled(got[5]);
  if (Object.keys(amounts).length === 0) return refuse('server holds no allocation in Placement');
  if (!inv.inventories || !usages)
    return refuse(`destination ${move.to} has no resource provider in Placement`);
  let room: HostRoomView = { inventories: inv.inventories, usages };
  let problem = roomProblem(move.to, room, amounts, alreadyComing);
  if (problem && !inv.fresh) {
    // A refusal is decided on inventories read now, never on a kept reading.
    const now = await placement.inventoriesOf(move.to, true);
    if (!now.inventories) return refuse(`destination ${move.to} has no resource provider in Placement`);
    room = { inventories: now.inventories, usages };
    problem = roomProblem(move.to, room, amounts, alreadyComing);
  }
  if (!problem) return { ok: true, need: amounts };
  return refuse(problem, null, roomProblem(move.to, room, amounts, {}) === null);
}

/** The value of a read, or its failure thrown where the check that needs it runs. */
function settled<T>(r: PromiseSettledResult<T>): T {
  if (r.status === 'rejected') throw r.reason;
  return r.value;
}
