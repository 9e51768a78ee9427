// Servers the loop keeps still whatever the planner would like: those in their cooldown after a
// move (no ping-pong), quarantined ones (failed too often), and those an operator task holds.
// They are marked on the loop's private copy of the snapshot with `aicerine:hold`, which the
// planner treats like any other reason a server cannot move, so the plan explains it.
import type { Snapshot } from '../model/snapshot.js';

export const HOLD_METADATA_KEY = 'aicerine:hold';

export interface ServerHold {
  serverId: string;
  /** In words: "cooldown until 2026-12-01T02:00Z after a move from compute-3", "quarantined: ...". */
  why: string;
}

/** A copy of the snapshot with each held server marked; the input is not changed. */
export function applyHolds(snapshot: Snapshot, holds: readonly ServerHold[]): Snapshot {
  if (holds.length === 0) return snapshot;
  const byId = new Map<string, string>();
  for (const h of holds) if (!byId.has(h.serverId)) byId.set(h.serverId, h.why);
  return {
    ...snapshot,
    servers: snapshot.servers.map((s) => {
      const why = byId.get(s.id);
      return why === undefined ? s : { ...s, metadata: { ...(s.metadata ?? {}), [HOLD_METADATA_KEY]: why } };
    }),
  };
}

export interface Cooldown {
  serverId: string;
  movedAt: string;
  from: string;
  to: string;
}

/** Cooldowns still running at `now` as holds. */
export function cooldownHolds(
  cooldowns: readonly Cooldown[],
  cooldownSeconds: number,
  now: Date,
): ServerHold[] {
  const out: ServerHold[] = [];
  for (const c of cooldowns) {
    const until = Date.parse(c.movedAt) + cooldownSeconds * 1000;
    if (until > now.getTime())
      out.push({
        serverId: c.serverId,
        why: `cooldown until ${new Date(until).toISOString()} after its move from ${c.from} to ${c.to}`,
      });
  }
  return out;
}

/** Servers on hosts an operator task holds: they stay where they are while the task runs. */
export function hostHolds(snapshot: Snapshot, held: ReadonlyMap<string, string>): ServerHold[] {
  if (held.size === 0) return [];
  const out: ServerHold[] = [];
  for (const s of snapshot.servers) {
    const why = held.get(s.host);
    if (why !== undefined) out.push({ serverId: s.id, why: `on ${s.host}, ${why}` });
  }
  return out;
}

/**
 * Held hosts are no destination either: on the loop's copy they show as disabled with the
 * holder as the reason, which the planner's destination check reports in the plan.
 */
export function markHeldHosts(snapshot: Snapshot, held: ReadonlyMap<string, string>): Snapshot {
  if (held.size === 0) return snapshot;
  return {
    ...snapshot,
    hosts: snapshot.hosts.map((h) => {
      const why = held.get(h.name);
      return why === undefined
        ? h
        : { ...h, service: { ...h.service, status: 'disabled', disabledReason: why } };
    }),
  };
}

/**
 * Servers whose move an aborted execution did not complete, held until `holdSeconds` after the
 * abort: an operator's abort (or a pause, or the window's end) is not undone by the next plan
 * re-issuing the very same moves.
 */
export function abortHolds(
  aborted: readonly { serverId: string; executionId: string; from: string; to: string; abortedAt: string }[],
  holdSeconds: number,
  now: Date,
): ServerHold[] {
  const out: ServerHold[] = [];
  for (const a of aborted) {
    const until = Date.parse(a.abortedAt) + holdSeconds * 1000;
    if (until > now.getTime())
      out.push({
        serverId: a.serverId,
        why: `held until ${new Date(until).toISOString()}: its move ${a.from} -> ${a.to} was in execution ${a.executionId}, aborted at ${a.abortedAt} (cooldowns.afterAbort)`,
      });
  }
  return out;
}
