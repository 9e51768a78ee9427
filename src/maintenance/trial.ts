// Can the rest of the aggregate take these hosts' servers, as evacuate-compute would move them?
// Pure (snapshot and policy in, verdict out), on top of the planner's drain feasibility: the
// servers the evacuation would move (live, or cold when they may stop) are placed on the other
// usable hosts under capacity, server groups and zones; the ones it could not move at all stay
// where they are and are listed, because the evacuation reports them and they need no room.

import { nonMigratableReasons } from '../cloud/migratable.js';
import type { Server, Snapshot } from '../model/snapshot.js';
import { type DrainPlacement, drainFeasibility } from '../planner/drain-feasibility.js';
import type { Policy } from '../policy/types.js';
import type { Unmovable } from './types.js';

export interface DrainVerdict {
  ok: boolean;
  /** Why not, one line per server that found no host; empty when ok. */
  reasons: string[];
  placements: DrainPlacement[];
  /** Servers of the hosts the evacuation would leave in place (they need no room elsewhere). */
  wontMove: Unmovable[];
}

const MOVABLE = new Set(['ACTIVE', 'PAUSED']);

/** Why evacuate-compute would leave the server where it is, or null when it moves it. */
export function whyEvacuationLeaves(s: Server, mayStopKey: string): string | null {
  const tied = nonMigratableReasons(s.flavor.extraSpecs ?? {});
  if (s.status === 'SHUTOFF') return null;
  if (!MOVABLE.has(s.status)) return `status ${s.status}: Nova moves it neither live nor cold`;
  if (tied.length === 0) return null;
  if (s.metadata?.[mayStopKey] === 'true') return null;
  return `cannot live-migrate (${tied.join(', ')}) and may not be stopped (metadata ${mayStopKey} is not "true")`;
}

/** The server as the evacuation treats it: movable, whatever ties it to its host's hardware. */
function asEvacuated(s: Server): Server {
  const extraSpecs = Object.fromEntries(
    Object.entries(s.flavor.extraSpecs ?? {}).filter(
      ([k, v]) => nonMigratableReasons({ [k]: v }).length === 0,
    ),
  );
  const metadata = { ...(s.metadata ?? {}) };
  delete metadata['aicerine:exclude'];
  delete metadata['aicerine:hold'];
  return {
    ...s,
    status: 'ACTIVE',
    taskState: null,
    // The evacuation lets Nova copy local disks (block migration) or cold-migrates them.
    sharedStorage: true,
    sriov: false,
    metadata,
    flavor: { ...s.flavor, extraSpecs },
  };
}

/** Throws InputError when the aggregate or a host is unknown (see drainFeasibility). */
export function drainVerdict(
  snapshot: Snapshot,
  policy: Policy,
  aggregate: string,
  hosts: readonly string[],
  mayStopKey: string,
): DrainVerdict {
  const leaving = new Set(hosts);
  const wontMove: Unmovable[] = [];
  const servers: Server[] = [];
  for (const s of snapshot.servers) {
    if (!leaving.has(s.host)) {
      servers.push(s);
      continue;
    }
    const why = whyEvacuationLeaves(s, mayStopKey);
    if (why === null) servers.push(asEvacuated(s));
    else wontMove.push({ server: s.id, name: s.name, why });
  }
  const trial: Snapshot = {
    ...snapshot,
    servers,
    // A host's servers that stay are no longer members anyone must keep apart from or together with.
    serverGroups: snapshot.serverGroups.map((g) => ({
      ...g,
      members: g.members.filter((m) => !wontMove.some((w) => w.server === m)),
    })),
  };
  const verdict = drainFeasibility(trial, policy, aggregate, hosts);
  return { ok: verdict.ok, reasons: verdict.reasons, placements: verdict.placements, wontMove };
}
