// Builds a simulated cloud from what the command line gives: a snapshot file or a synthetic
// spec, and a load model (Bitbrains traces when found, generated load otherwise).

import { readSnapshot } from '../formats/snapshot-file.js';
import type { Snapshot } from '../model/snapshot.js';
import { type SynthOptions, synthesizeSnapshot } from '../snapshot/synth.js';
import { findBitbrainsHourly, loadBitbrainsHourly } from '../traces/bitbrains.js';
import { readJsonNumber } from '../util/json-number.js';
import { SimClock } from './clock.js';
import { generatedLoadModel, type LoadModel, staticLoadModel, traceLoadModel } from './load.js';
import { SimCloud, type SimTiming } from './model.js';

export type LoadChoice = 'auto' | 'trace' | 'generated' | 'static';

export interface SimSetupOptions {
  snapshotFile?: string | undefined;
  /** "hosts,servers,groups,seed[,aggregates[,disabled]]" */
  synth?: string | undefined;
  speed?: number | undefined;
  load?: LoadChoice | undefined;
  /** Bitbrains hourly CSV; default: findBitbrainsHourly(). */
  tracePath?: string | undefined;
  maxConcurrentLiveMigrations?: number | undefined;
  /** Migration timings (docs/simulator.md, "Live migrations"); unset ones keep the lab's. */
  timing?: Partial<SimTiming> | undefined;
  /** Report memory_* progress of in-progress migrations as libvirt does (default: null, as the lab). */
  migrationProgress?: boolean | undefined;
}

export interface SimSetup {
  cloud: SimCloud;
  snapshot: Snapshot;
}

const SYNTH_FIELDS = ['hosts', 'servers', 'groups', 'seed', 'aggregates', 'disabled'] as const;

/** Parses "--synth 40,1200,30,7,4,1" (positional) or "hosts=40,servers=1200,..." (named). */
export function parseSynthSpec(spec: string): SynthOptions {
  const parts = spec.split(',').map((p) => p.trim());
  const values: Partial<Record<(typeof SYNTH_FIELDS)[number], number>> = {};
  parts.forEach((p, i) => {
    const [k, v] = p.includes('=') ? (p.split('=', 2) as [string, string]) : [SYNTH_FIELDS[i], p];
    if (k === undefined || !(SYNTH_FIELDS as readonly string[]).includes(k)) {
      throw new Error(
        `--synth ${spec}: part ${i + 1} (${JSON.stringify(p)}): expected ${SYNTH_FIELDS.join(',')}`,
      );
    }
    const n = readJsonNumber(v ?? '');
    if (n === undefined || !Number.isInteger(n) || n < 0) {
      throw new Error(`--synth ${spec}: ${k}: expected a non-negative integer, got ${JSON.stringify(v)}`);
    }
    values[k as (typeof SYNTH_FIELDS)[number]] = n;
  });
  for (const k of ['hosts', 'servers', 'groups', 'seed'] as const) {
    if (values[k] === undefined)
      throw new Error(`--synth ${spec}: ${k} is missing (format: ${SYNTH_FIELDS.join(',')})`);
  }
  return {
    hosts: values.hosts as number,
    servers: values.servers as number,
    groups: values.groups as number,
    seed: values.seed as number,
    ...(values.aggregates !== undefined ? { aggregates: values.aggregates } : {}),
    ...(values.disabled !== undefined ? { disabled: values.disabled } : {}),
  };
}

export async function chooseLoadModel(choice: LoadChoice, tracePath?: string): Promise<LoadModel> {
  if (choice === 'generated') return generatedLoadModel();
  if (choice === 'static') return staticLoadModel();
  const path = tracePath ?? findBitbrainsHourly();
  if (!path) {
    if (choice === 'trace')
      throw new Error('--load trace: no Bitbrains hourly trace found (give --trace FILE)');
    return generatedLoadModel();
  }
  const series = await loadBitbrainsHourly(path);
  const model = traceLoadModel(series);
  return { ...model, description: `bitbrains ${path}: ${model.description}` };
}

export async function setupSim(opts: SimSetupOptions): Promise<SimSetup> {
  if (opts.snapshotFile && opts.synth) throw new Error('give either --snapshot or --synth, not both');
  const snapshot = opts.snapshotFile
    ? await readSnapshot(opts.snapshotFile)
    : synthesizeSnapshot(parseSynthSpec(opts.synth ?? '40,1200,30,1,4,1'));
  const load = await chooseLoadModel(opts.load ?? 'auto', opts.tracePath);
  const cloud = new SimCloud(snapshot, {
    clock: new SimClock({ speed: opts.speed ?? 1 }),
    load,
    ...(opts.maxConcurrentLiveMigrations !== undefined
      ? { maxConcurrentLiveMigrations: opts.maxConcurrentLiveMigrations }
      : {}),
    ...(opts.timing ? { timing: opts.timing } : {}),
    ...(opts.migrationProgress !== undefined ? { migrationProgress: opts.migrationProgress } : {}),
  });
  return { cloud, snapshot };
}
