// Pre-flight: right before a live migration is asked for, is it still the move the plan meant
// and can Nova carry it out now? Everything is read fresh from Nova and Placement; nothing the
// plan assumed is trusted. A refusal names what was found.
import type { PlannedMove } from './journal.js';
import type { ComputeServiceView, ExecutorCloud, HostRoomView } from './ports.js';

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

/**
 * Checks one move against the cloud as it is now. `alreadyComing` is what migrations this
 * executor started towards the destination will claim but Placement may not show yet.
 * `service` reads a host's nova-compute service (default: one read per host). Every read is
 * asked at once (they change nothing), so a pre-flight costs one round trip; the checks then
 * run in order, and a read that failed only matters when its check is reached.
 */
export async function preflight(
  cloud: ExecutorCloud,
  move: PlannedMove,
  alreadyComing: Record<string, number>,
  service: (host: string) => Promise<ComputeServiceView | null> = (h) => cloud.getComputeService(h),
): Promise<PreflightResult> {
  const reads = await Promise.allSettled([
    cloud.getServer(move.serverId),
    service(move.from),
    service(move.to),
    cloud.getServerAllocation(move.serverId),
    cloud.getHostRoom(move.to),
  ] as const);
  const s = settled(reads[0]);
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
  const src = settled(reads[1]);
  const dst = settled(reads[2]);
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
  const amounts = settled(reads[3]);
  const r = settled(reads[4]);
  if (Object.keys(amounts).length === 0) return refuse('server holds no allocation in Placement');
  if (!r) return refuse(`destination ${move.to} has no resource provider in Placement`);
  const problem = roomProblem(move.to, r, amounts, alreadyComing);
  if (!problem) return { ok: true, need: amounts };
  return refuse(problem, null, roomProblem(move.to, r, amounts, {}) === null);
}

/** The value of a read, or its failure thrown where the check that needs it runs. */
function settled<T>(r: PromiseSettledResult<T>): T {
  if (r.status === 'rejected') throw r.reason;
  return r.value;
}
