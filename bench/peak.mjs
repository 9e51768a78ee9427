// Peak replay (issue 28): Bitbrains August, 500 VMs placed on hosts as `snapshot import
// bitbrains` places them. Profiles are learned from days 1-14; then for each night of days 15-28
// the planner plans at 01:00 (the 01:00-05:00 window), once on current load (at most --moves) and
// once on the forecast with at most as many moves as current load made that night (equal moves), the
// moves are applied, and the day's hours 08:00-20:00 are scored with the real samples. Each
// strategy keeps its own placement from night to night.
//
//   node bench/peak.mjs [--moves 10] [--cores 48] [--hosts N] [--peaks 6] [--horizon 19]
//                       [--resolution hour-of-week] [--quantile 0.9] [--threshold 5] [--min-gain G]
//                       [--max-error 0.15] [--force-forecast] [--unequal-moves] [--traces ../shared/traces/bitbrains-rnd]
//
// Hosts: the import's host model and count (Placement: 48 cores x 4 vCPU, 768 GiB). --cores
// takes utilization over fewer physical cores (the allocation ratio raised to keep Placement
// capacity equal) to make the cloud busier: at 28 the aggregate's mean is at or above the hot
// line in a third of the scored hours, where balance can only add hot hosts (the "balanced
// floor" line). The trace's timestamps are local (Europe/Amsterdam) midnight at hour 0; August
// has no daylight-saving change.
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { checkPlan } from '../dist/checker/index.js';
import { buildServerProfile, slotClock } from '../dist/forecast/reduce.js';
import { planSnapshot } from '../dist/planner/index.js';
import { compilePolicy } from '../dist/policy/load.js';
import { importBitbrains } from '../dist/snapshot/import-bitbrains.js';
import { loadBitbrains } from '../dist/traces/bitbrains.js';

const { values: args } = parseArgs({
  options: {
    moves: { type: 'string', default: '10' },
    cores: { type: 'string', default: '48' },
    hosts: { type: 'string' },
    peaks: { type: 'string', default: '6' },
    horizon: { type: 'string', default: '19' },
    'max-error': { type: 'string', default: '0.15' },
    quantile: { type: 'string', default: '0.9' },
    // Plan on the forecast whatever its measured error (the snapshot carries none).
    'force-forecast': { type: 'boolean', default: false },
    'min-gain': { type: 'string' },
    // Each night the forecast gets as many moves as current load made that night (its budget
    // capped there), so the two are compared at equal moves; --unequal-moves gives both --moves.
    'unequal-moves': { type: 'boolean', default: false },
    threshold: { type: 'string', default: '5' },
    resolution: { type: 'string', default: 'hour-of-week' },
    traces: { type: 'string', default: '../shared/traces/bitbrains-rnd' },
    verbose: { type: 'boolean', default: false },
  },
});

const TZ = 'Europe/Amsterdam';
const HOT = 0.85;
const tracesDir = resolve(args.traces);
if (!existsSync(tracesDir)) {
  console.log(`peak replay: skipped, no Bitbrains traces at ${tracesDir} (../shared is absent)`);
  process.exit(0);
}

const budget = Number(args.moves);
const cores = Number(args.cores);
const series = await loadBitbrains(tracesDir);
const start = Math.min(...series.map((s) => s.startTs));
const HOURS = 31 * 24;

// cpu[v][h], memory[v][h]: the VM's hour h of the month (nearest hour where it has none, as the import).
const cpu = series.map((s) => hourly(s, s.cpuCores));
const mem = series.map((s) => hourly(s, s.memMB));
function hourly(s, values) {
  const out = new Float64Array(HOURS);
  const offset = Math.round((s.startTs - start) / 3600);
  for (let h = 0; h < HOURS; h++) {
    const i = Math.min(values.length - 1, Math.max(0, h - offset));
    out[h] = Math.round((values[i] ?? 0) * 1000) / 1000;
  }
  return out;
}

// Placement as the import does it; hosts given --cores physical cores, same Placement capacity.
const imported = importBitbrains(series, { seed: 1, ...(args.hosts ? { hosts: Number(args.hosts) } : {}) });
for (const h of imported.hosts) {
  const v = h.inventory.VCPU;
  v.allocationRatio = (v.total * v.allocationRatio) / cores;
  v.total = cores;
}
const hostNames = imported.hosts.map((h) => h.name);
const ids = imported.servers.map((s) => s.id);
const initial = imported.servers.map((s) => hostNames.indexOf(s.host));

/** Profiles from hours [from, to) of the month. */
function learn(from, to, minSamples = 2) {
  const opts = { resolution: args.resolution, quantile: Number(args.quantile), timeZone: TZ, minSamples };
  const clock = slotClock(opts.resolution, opts.timeZone);
  const servers = {};
  series.forEach((_, v) => {
    const samples = (arr) => {
      const out = [];
      for (let h = from; h < to; h++) out.push({ t: start + h * 3600, value: arr[h] });
      return out;
    };
    servers[ids[v]] = buildServerProfile({ cpu: samples(cpu[v]), memoryMB: samples(mem[v]) }, opts, clock);
  });
  return {
    format: 'aicerine-profiles/1',
    resolution: opts.resolution,
    quantile: opts.quantile,
    timeZone: TZ,
    from: iso(from),
    to: iso(to),
    refreshedAt: iso(to),
    minSamples: opts.minSamples,
    servers,
  };
}

const iso = (h) => new Date((start + h * 3600) * 1000).toISOString().replace('.000Z', 'Z');

/** Busy cores per host at hour h under a placement. */
function hostLoads(placement, h) {
  const load = new Float64Array(hostNames.length);
  placement.forEach((host, v) => {
    load[host] += cpu[v][h];
  });
  return load;
}

/**
 * Mean absolute difference between forecast and measured host cpu utilization, over hosts and
 * hours [from, to), the forecast taken at `asOf` (current load where a slot has no figure).
 */
function forecastError(profiles, placement, from, to, asOf) {
  const clock = slotClock(profiles.resolution, profiles.timeZone);
  let sum = 0;
  let signed = 0;
  let relative = 0;
  let n = 0;
  for (let h = from; h < to; h++) {
    const slot = clock.slotOf(start + h * 3600);
    const forecast = new Float64Array(hostNames.length);
    placement.forEach((host, v) => {
      forecast[host] += profiles.servers[ids[v]]?.cpu?.[slot] ?? cpu[v][asOf(h)];
    });
    const actual = hostLoads(placement, h);
    // What balancing sees: each host's difference from the hour's mean host, forecast against
    // measured. A forecast too high (or low) on every host alike misleads no move.
    const fMean = forecast.reduce((a, b) => a + b, 0) / forecast.length;
    const aMean = actual.reduce((a, b) => a + b, 0) / actual.length;
    for (let i = 0; i < hostNames.length; i++) {
      sum += Math.abs(forecast[i] - actual[i]) / cores;
      signed += (forecast[i] - actual[i]) / cores;
      relative += Math.abs(forecast[i] - fMean - (actual[i] - aMean)) / cores;
      n++;
    }
  }
  const per = (x) => (n === 0 ? 0 : x / n);
  return { meanAbsolute: per(sum), hours: n, bias: per(signed), relative: per(relative) };
}

const day = (d) => (d - 1) * 24;
const profiles = learn(day(1), day(15));
// The error the planner is held to: profiles of days 1-7 forecasting days 8-14, as a daily
// refresh would have measured it before the replay starts.
// One week holds one sample per hour of the week: with minSamples 2 every slot would be null and
// the "forecast" judged would be current load itself.
const holdoutProfiles = learn(day(1), day(8), 1);
const planHour = (h) => h - (h % 24) + 1;
const holdout = forecastError(holdoutProfiles, initial, day(8), day(15), planHour);
// And current load's, as the recorder measures it beside (each server's 01:00 load, all day).
const holdoutCurrent = forecastError({ ...holdoutProfiles, servers: {} }, initial, day(8), day(15), planHour);
if (!args['force-forecast'])
  profiles.errors = {
    _unassigned_: {
      meanAbsolute: holdout.meanAbsolute,
      currentLoadAbsolute: holdoutCurrent.meanAbsolute,
      hours: holdout.hours,
      from: iso(day(8)),
      to: iso(day(15)),
    },
  };

function snapshotAt(placement, h, withProfiles) {
  const usage = hostNames.map(() => ({ VCPU: 0, MEMORY_MB: 0 }));
  const servers = imported.servers.map((s, v) => {
    usage[placement[v]].VCPU += s.flavor.vcpus;
    usage[placement[v]].MEMORY_MB += s.flavor.ramMB;
    return { ...s, host: hostNames[placement[v]], load: { cpu: cpu[v][h], memoryMB: Math.round(mem[v][h]) } };
  });
  const hosts = imported.hosts.map((host, i) => ({ ...host, usage: usage[i], load: undefined }));
  return {
    ...imported,
    takenAt: iso(h),
    hosts,
    servers,
    ...(withProfiles ? { profiles } : {}),
  };
}

const policyOf = (load, maxMoves = budget) =>
  compilePolicy({
    load,
    dimensions: [{ name: 'cpu', weight: 1 }],
    budget: { maxMoves },
    forecast: {
      horizonHours: Number(args.horizon),
      peakSlots: Number(args.peaks),
      maxError: Number(args['max-error']),
    },
    hotThreshold: HOT,
    threshold: Number(args.threshold),
    ...(args['min-gain'] !== undefined ? { minGain: Number(args['min-gain']) } : {}),
  });

const mean = (values) => values.reduce((s, v) => s + v, 0) / values.length;

function p95(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(0.95 * sorted.length) - 1)];
}

const runs = {
  current: {
    placement: [...initial],
    hot: 0,
    excess: 0,
    imbalance: [],
    moves: 0,
    violations: 0,
    fallbacks: 0,
  },
  forecast: {
    placement: [...initial],
    hot: 0,
    excess: 0,
    imbalance: [],
    moves: 0,
    violations: 0,
    fallbacks: 0,
  },
};
// Hot host-hours if each scored hour's total load were spread evenly over the hosts: every host
// is hot in an hour whose mean is at or above the threshold, none otherwise. Balance cannot beat
// it in the first kind of hour (only piling load on fewer hosts would).
let floor = 0;
for (let d = 15; d <= 28; d++)
  for (let h = day(d) + 8; h < day(d) + 20; h++)
    if (hostLoads(initial, h).reduce((a, b) => a + b, 0) / (cores * hostNames.length) >= HOT)
      floor += hostNames.length;
let onCurrentLoad = 0;
const errorDays = [];
const persistenceDays = [];
for (let d = 15; d <= 28; d++) {
  const night = day(d) + 1;
  let tonight = budget;
  for (const [name, run] of Object.entries(runs)) {
    const snap = snapshotAt(run.placement, night, name === 'forecast');
    let policy = policyOf(name, budget);
    let plan = planSnapshot(snap, policy);
    const count = (p) => p.aggregates.reduce((n, a) => n + a.moves.length, 0);
    // Equal moves: a plan on the forecast that made more moves than current load did tonight is
    // made again with its budget capped there (none at all: no moves). A plan that fell back to
    // current load is current load's own plan, kept as it is.
    const onForecast = plan.aggregates.some((a) => a.forecast?.load === 'forecast');
    if (name === 'forecast' && !args['unequal-moves'] && onForecast && count(plan) > tonight) {
      policy = policyOf(name, tonight);
      plan =
        tonight === 0
          ? { ...plan, aggregates: plan.aggregates.map((a) => ({ ...a, moves: [] })) }
          : planSnapshot(snap, policy);
    }
    if (count(plan) > 0)
      run.violations += checkPlan(snap, plan, { dimensions: policy.dimensions }).violations.length;
    if (name === 'current') tonight = count(plan);
    for (const a of plan.aggregates) {
      if (a.forecast?.load === 'current') run.fallbacks++;
      if (name === 'forecast') onCurrentLoad = Math.max(onCurrentLoad, a.forecast?.serversOnCurrentLoad ?? 0);
      for (const m of a.moves) run.placement[ids.indexOf(m.server)] = hostNames.indexOf(m.to);
      run.moves += a.moves.length;
      if (args.verbose && name === 'forecast') for (const m of a.moves) console.log(`day ${d}: ${m.reason}`);
    }
    for (let h = day(d) + 8; h < day(d) + 20; h++) {
      const utils = [...hostLoads(run.placement, h)].map((l) => l / cores);
      run.hot += utils.filter((u) => u >= HOT).length;
      // How far above the threshold, in core-hours: a host-hour count alone prefers one host at
      // 200% to three at 90%.
      run.excess += utils.reduce((s, u) => s + Math.max(0, u - HOT) * cores, 0);
      const mean = utils.reduce((s, u) => s + u, 0) / utils.length;
      run.imbalance.push(Math.sqrt(utils.reduce((s, u) => s + (u - mean) ** 2, 0) / utils.length));
    }
  }
  errorDays.push(forecastError(profiles, runs.forecast.placement, day(d) + 8, day(d) + 20, () => night));
  // The same figures for what current-load planning assumes: the night's load all day.
  persistenceDays.push(
    forecastError(
      { ...profiles, servers: {} },
      runs.forecast.placement,
      day(d) + 8,
      day(d) + 20,
      () => night,
    ),
  );
}
const weighted = (days, key) =>
  days.reduce((s, e) => s + e[key] * e.hours, 0) / days.reduce((s, e) => s + e.hours, 0);
const error = weighted(errorDays, 'meanAbsolute');

const c = runs.current;
const f = runs.forecast;
console.log(
  `peak replay: hot host-hours current=${c.hot} forecast=${f.hot}; daytime p95 imbalance current=${p95(c.imbalance).toFixed(4)} forecast=${p95(f.imbalance).toFixed(4)}; moves current=${c.moves} forecast=${f.moves}; forecast error ${error.toFixed(4)}`,
);
console.log(
  `  ${series.length} VMs on ${hostNames.length} hosts of ${cores} cores; budget ${budget} moves a night; ` +
    `profiles ${args.resolution} p${Math.round(Number(args.quantile) * 100)} of days 1-14 (${TZ}); horizon ${args.horizon} h, ${args.peaks} peaks; ` +
    `holdout error (days 8-14) ${holdout.meanAbsolute.toFixed(4)} (current load ${holdoutCurrent.meanAbsolute.toFixed(4)}); servers on current load ${onCurrentLoad}; ` +
    `fallback nights ${f.fallbacks}; checker violations ${c.violations + f.violations}`,
);
console.log(
  `  core-hours above ${HOT * 100}%: current=${c.excess.toFixed(0)} forecast=${f.excess.toFixed(0)}; ` +
    `daytime mean imbalance current=${mean(c.imbalance).toFixed(4)} forecast=${mean(f.imbalance).toFixed(4)}`,
);
console.log(
  `  error (host utilization, daytime): forecast absolute ${error.toFixed(4)}, bias ${weighted(errorDays, 'bias').toFixed(4)}, ` +
    `relative to the hour's mean host ${weighted(errorDays, 'relative').toFixed(4)}; the night's load as forecast: absolute ` +
    `${weighted(persistenceDays, 'meanAbsolute').toFixed(4)}, bias ${weighted(persistenceDays, 'bias').toFixed(4)}, relative ${weighted(persistenceDays, 'relative').toFixed(4)}; ` +
    `balanced floor ${floor} hot host-hours`,
);
