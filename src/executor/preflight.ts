// Pre-flight: right before a live migration is asked for, is it still the move the plan meant
// and can Nova carry it out now? Everything is read fresh from Nova and Placement; nothing the
// plan assumed is trusted. A refusal names what was found.
import type { PlannedMove } from './journal.js';
import type { ExecutorCloud, HostRoomView } from './ports.js';

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
 */
export async function preflight(
  cloud: ExecutorCloud,
  move: PlannedMove,
  alreadyComing: Record<string, number>,
): Promise<PreflightResult> {
  const server = await cloud.getServer(move.serverId);
  if (!server) return refuse(`server ${move.serverId} no longer exists`);
  if (server.status !== 'ACTIVE') {
    return refuse(
      `server is ${server.status}, not ACTIVE${server.fault ? ` (fault: ${server.fault})` : ''}`,
      server.status === 'ERROR' ? (server.fault ?? 'server is in ERROR') : null,
    );
  }
  if (server.taskState !== null) return refuse(`server has task state ${server.taskState}`);
  if (server.host !== move.from) {
    return refuse(
      server.host === move.to
        ? `server is already on its destination ${move.to}`
        : `server is on ${server.host ?? 'no host'}, not on the plan's source ${move.from}`,
    );
  }
  const [source, dest] = await Promise.all([
    cloud.getComputeService(move.from),
    cloud.getComputeService(move.to),
  ]);
  if (!source) return refuse(`source ${move.from} has no nova-compute service`);
  if (!source.up || source.forcedDown) return refuse(`source ${move.from}: nova-compute is down`);
  if (!dest) return refuse(`destination ${move.to} has no nova-compute service`);
  if (dest.forcedDown) return refuse(`destination ${move.to}: nova-compute is forced down`);
  if (!dest.up) return refuse(`destination ${move.to}: nova-compute is down`);
  if (!dest.enabled) {
    return refuse(
      `destination ${move.to} is disabled${dest.disabledReason ? ` (${dest.disabledReason})` : ''}`,
    );
  }
  const [need, room] = await Promise.all([
    cloud.getServerAllocation(move.serverId),
    cloud.getHostRoom(move.to),
  ]);
  if (Object.keys(need).length === 0) return refuse('server holds no allocation in Placement');
  if (!room) return refuse(`destination ${move.to} has no resource provider in Placement`);
  const problem = roomProblem(move.to, room, need, alreadyComing);
  if (!problem) return { ok: true, need };
  return refuse(problem, null, roomProblem(move.to, room, need, {}) === null);
}
