// Settings of VCPU ratio prevention, per aggregate. The configuration file validates its own
// keys; these are the typed values it hands over, with a check that the combination makes sense.

export interface RatioSettings {
  /** The VCPU allocation ratio of a host that is not running hot (what the aggregate normally offers). */
  target: number;
  /** Never lower than this, however hot the host runs. */
  floor: number;
  /** A host is hot at or above this CPU utilization (busy cores / VCPU total, 0..1). */
  hotUtilization: number;
  /** A host is cool at or below this; between cool and hot nothing changes (the hysteresis band). */
  coolUtilization: number;
  /** Optional: also hot at or above this share of CPU time stolen by the hypervisor (0..1). */
  hotSteal?: number | undefined;
  /** Optional: cool only at or below this steal share as well. */
  coolSteal?: number | undefined;
  /** How much one decision lowers the ratio. */
  stepDown: number;
  /** How much one decision raises it back. */
  stepUp: number;
  /** At least this long between two changes of one host's ratio, seconds. */
  minIntervalSeconds: number;
  /** After lowering a host, this long before it may be raised again, seconds (the longer time hysteresis). */
  restoreAfterSeconds: number;
}

/** Defaults that go with a target and a floor: hot at 85%, cool at 60%, half a vCPU per core a step. */
export function defaultRatioSettings(target: number, floor: number): RatioSettings {
  return {
    target,
    floor,
    hotUtilization: 0.85,
    coolUtilization: 0.6,
    stepDown: 0.5,
    stepUp: 0.25,
    minIntervalSeconds: 900,
    restoreAfterSeconds: 3600,
  };
}

/** Every problem with the combination, named by key; empty when it is sound. */
export function ratioSettingsProblems(s: RatioSettings): string[] {
  const out: string[] = [];
  const positive = (k: keyof RatioSettings) => {
    const v = s[k];
    if (typeof v !== 'number' || !(v > 0) || !Number.isFinite(v))
      out.push(`${k}: expected a number > 0, got ${String(v)}`);
  };
  for (const k of ['target', 'floor', 'stepDown', 'stepUp'] as const) positive(k);
  for (const k of ['minIntervalSeconds', 'restoreAfterSeconds'] as const) {
    if (!(s[k] >= 0)) out.push(`${k}: expected a number of seconds >= 0, got ${s[k]}`);
  }
  if (s.floor > s.target) out.push(`floor: expected at most target (${s.target}), got ${s.floor}`);
  for (const k of ['hotUtilization', 'coolUtilization', 'hotSteal', 'coolSteal'] as const) {
    const v = s[k];
    if (v !== undefined && !(v >= 0 && v <= 1)) out.push(`${k}: expected a fraction in [0, 1], got ${v}`);
  }
  if (!(s.coolUtilization < s.hotUtilization))
    out.push(
      `coolUtilization: expected below hotUtilization (${s.hotUtilization}), got ${s.coolUtilization}`,
    );
  if ((s.hotSteal === undefined) !== (s.coolSteal === undefined))
    out.push('hotSteal, coolSteal: give both or neither');
  else if (s.hotSteal !== undefined && s.coolSteal !== undefined && !(s.coolSteal < s.hotSteal))
    out.push(`coolSteal: expected below hotSteal (${s.hotSteal}), got ${s.coolSteal}`);
  if (s.restoreAfterSeconds < s.minIntervalSeconds)
    out.push(
      `restoreAfterSeconds: expected at least minIntervalSeconds (${s.minIntervalSeconds}), got ${s.restoreAfterSeconds}`,
    );
  return out;
}

export function checkRatioSettings(s: RatioSettings, where = 'ratio settings'): void {
  const problems = ratioSettingsProblems(s);
  if (problems.length) throw new RangeError(`${where}: ${problems.join('; ')}`);
}
