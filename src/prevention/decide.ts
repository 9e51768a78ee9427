// Decides, per host, whether its VCPU allocation ratio should go down (it runs hot: let Nova
// place new servers elsewhere), back up toward the target (it cooled down) or stay. Pure: the
// hosts' measured load, Placement inventory and usage, the settings, the last change made to
// each host and the time in; one decision with its reason per host out.
//
// Hysteresis is both in load and in time: hot and cool are two thresholds with a band between
// them where nothing changes, two changes of one host are at least minIntervalSeconds apart,
// and a lowered host waits restoreAfterSeconds before it is raised. Noise around one threshold
// therefore moves a ratio at most once per interval, never back and forth.
import { checkRatioSettings, type RatioSettings } from './settings.js';

export interface HostLoad {
  /** Busy cores / VCPU total, over a window long enough to smooth bursts (e.g. 15 minutes). */
  utilization: number;
  /** Share of CPU time stolen by the hypervisor, when measured. */
  steal?: number | undefined;
}

export interface HostRatioState {
  host: string;
  /** The compute node's Placement resource provider. */
  rpUuid: string;
  /** The VCPU inventory as Placement holds it now. */
  ratio: number;
  total: number;
  reserved: number;
  /** VCPU allocated now (Placement usage). */
  used: number;
  /** undefined: not measured (or stale); the host is left alone. */
  load?: HostLoad | undefined;
}

/** The last change Aicerine made to a host's ratio. */
export interface LastRatioChange {
  at: string;
  from: number;
  to: number;
}

export interface RatioDecisionInput {
  hosts: readonly HostRatioState[];
  settings: RatioSettings;
  lastChanges: ReadonlyMap<string, LastRatioChange>;
  /** Hosts whose ratio nova.conf (or someone else) owns: never written. */
  pinned: ReadonlySet<string>;
  now: Date;
}

export const RATIO_DECISION_CODES = [
  'lower-hot',
  'lower-above-target',
  'raise-cool',
  'raise-below-floor',
  'hold-pinned',
  'hold-no-load',
  'hold-no-capacity',
  'hold-band',
  'hold-at-lowest',
  'hold-at-target',
  'hold-too-soon',
] as const;
export type RatioDecisionCode = (typeof RATIO_DECISION_CODES)[number];

export interface RatioDecision {
  host: string;
  rpUuid: string;
  action: 'lower' | 'raise' | 'hold';
  code: RatioDecisionCode;
  from: number;
  /** Equal to `from` when holding. */
  to: number;
  reason: string;
}

/** Ratios are written with two decimals: finer steps change nothing Nova can see. */
const STEP = 100;

/** The smallest two-decimal ratio at which current allocations still fit: used <= (total - reserved) * ratio. */
export function lowestRatioForUsage(used: number, total: number, reserved: number): number {
  const usable = total - reserved;
  if (usable <= 0) return Number.POSITIVE_INFINITY;
  let r = Math.ceil((used / usable) * STEP - 1e-9) / STEP;
  while (usable * r < used) r = Math.round(r * STEP + 1) / STEP;
  return Math.max(0, r);
}

const two = (x: number) => Math.round(x * STEP) / STEP;
const pct = (x: number) => `${Math.round(x * 100)}%`;

export function decideRatios(input: RatioDecisionInput): RatioDecision[] {
  checkRatioSettings(input.settings);
  return [...input.hosts].sort((a, b) => a.host.localeCompare(b.host)).map((h) => decideHost(h, input));
}

function decideHost(h: HostRatioState, input: RatioDecisionInput): RatioDecision {
  const s = input.settings;
  const r = h.ratio;
  const hold = (code: RatioDecisionCode, reason: string): RatioDecision => ({
    host: h.host,
    rpUuid: h.rpUuid,
    action: 'hold',
    code,
    from: r,
    to: r,
    reason,
  });
  const change = (code: RatioDecisionCode, to: number, reason: string): RatioDecision => ({
    host: h.host,
    rpUuid: h.rpUuid,
    action: to < r ? 'lower' : 'raise',
    code,
    from: r,
    to,
    reason,
  });

  if (input.pinned.has(h.host))
    return hold('hold-pinned', `${h.host}: its ratio is set outside Aicerine (nova.conf); not written`);
  const need = lowestRatioForUsage(h.used, h.total, h.reserved);
  if (!Number.isFinite(need))
    return hold('hold-no-capacity', `${h.host}: no usable VCPU (total ${h.total}, reserved ${h.reserved})`);
  const lowest = Math.max(s.floor, need);
  const lowestWhy =
    need > s.floor
      ? `${h.used} VCPU allocated need ${need} (used <= (total - reserved) x ratio)`
      : `the floor is ${s.floor}`;

  // Outside the bounds: back inside, whatever the load (the bounds are the operator's).
  if (r < s.floor) {
    return change(
      'raise-below-floor',
      s.floor,
      `${h.host}: ratio ${r} is below the floor ${s.floor}: raised to it`,
    );
  }
  if (r > s.target && lowest < r) {
    const to = Math.max(s.target, lowest);
    return change(
      'lower-above-target',
      to,
      `${h.host}: ratio ${r} is above the target ${s.target}: lowered to ${to}${to > s.target ? ` (${lowestWhy})` : ''}`,
    );
  }

  if (!h.load) return hold('hold-no-load', `${h.host}: no CPU measurement: left as it is`);
  const { utilization: u, steal } = h.load;
  const stealHot = steal !== undefined && s.hotSteal !== undefined && steal >= s.hotSteal;
  const stealCool = steal === undefined || s.coolSteal === undefined || steal <= s.coolSteal;
  const hot = u >= s.hotUtilization || stealHot;
  const cool = u <= s.coolUtilization && stealCool;
  const measured = `cpu ${pct(u)}${steal !== undefined ? `, steal ${pct(steal)}` : ''}`;

  const last = input.lastChanges.get(h.host);
  const since = last ? (input.now.getTime() - Date.parse(last.at)) / 1000 : Number.POSITIVE_INFINITY;

  if (hot) {
    const why =
      u >= s.hotUtilization
        ? `cpu ${pct(u)} >= hot ${pct(s.hotUtilization)}`
        : `steal ${pct(steal ?? 0)} >= hot ${pct(s.hotSteal ?? 0)}`;
    if (r <= lowest)
      return hold(
        'hold-at-lowest',
        `${h.host}: runs hot (${why}) but ratio ${r} is already as low as it may go: ${lowestWhy}`,
      );
    if (since < s.minIntervalSeconds)
      return hold(
        'hold-too-soon',
        `${h.host}: runs hot (${why}); last changed ${Math.round(since)} s ago, next change after ${s.minIntervalSeconds} s`,
      );
    const to = Math.max(lowest, two(r - s.stepDown));
    return change(
      'lower-hot',
      to,
      `${h.host}: runs hot (${why}): ratio ${r} -> ${to} so that Nova places new servers elsewhere`,
    );
  }
  if (cool) {
    if (r >= s.target) return hold('hold-at-target', `${h.host}: ${measured}, ratio ${r} is at the target`);
    const wait = last && last.to < last.from ? s.restoreAfterSeconds : s.minIntervalSeconds;
    if (since < wait)
      return hold(
        'hold-too-soon',
        `${h.host}: cool (${measured}); last changed ${Math.round(since)} s ago, raised again after ${wait} s`,
      );
    const to = Math.min(s.target, two(r + s.stepUp));
    return change(
      'raise-cool',
      to,
      `${h.host}: cool (cpu ${pct(u)} <= ${pct(s.coolUtilization)}): ratio ${r} -> ${to}, back toward the target ${s.target}`,
    );
  }
  return hold(
    'hold-band',
    `${h.host}: ${measured}, between cool ${pct(s.coolUtilization)} and hot ${pct(s.hotUtilization)}: ratio ${r} stays`,
  );
}
