// Reader of the Bitbrains GWA-T-12 "Rnd" VM traces (../shared/traces/bitbrains-rnd/SOURCE.md):
// the derived hourly CSV and the original per-VM 5-minute CSVs, both turned into hourly series.
import { existsSync, type Stats } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { InputError } from '../errors.js';
import { readTextFile } from '../formats/text-file.js';

/** One VM's utilisation history at a fixed step. */
export interface VmSeries {
  id: string;
  /** Provisioned vCPUs (largest seen, at least 1). */
  cores: number;
  /** Provisioned memory, MiB (largest seen, at least MIN_MEM_CAPACITY_MB). */
  memCapacityMB: number;
  stepSeconds: number;
  /** Unix time (s) of step 0. */
  startTs: number;
  /** Busy cores per step, 0..cores. */
  cpuCores: Float32Array;
  /** MiB used per step, 0..memCapacityMB. */
  memMB: Float32Array;
}

export const BITBRAINS_STEP_SECONDS = 3600;
/**
 * About a fifth of the VMs report less than 0.5 GiB provisioned (SOURCE.md, "known quirks"); no
 * cloud sells such a flavor, and a share of a few KiB would make any VM look hot.
 */
export const MIN_MEM_CAPACITY_MB = 512;

const HOURLY_RELATIVE = '../shared/traces/bitbrains-rnd/derived/hourly_2013-8.csv.gz';
const SAMPLE_RELATIVE = 'data/bitbrains-sample/hourly-sample.csv.gz';

/** Columns of the derived hourly file that the reader needs (others are ignored). */
const HOURLY_COLUMNS = [
  'vm_id',
  'hour_ts_s',
  'cpu_cores',
  'cpu_capacity_mhz',
  'mem_capacity_kb',
  'cpu_mhz_mean',
  'mem_kb_mean',
] as const;

/** One sample, already in the units of a VmSeries row before clamping. */
interface Sample {
  ts: number;
  cores: number;
  capacityMhz: number;
  memCapacityKB: number;
  cpuMhz: number;
  memKB: number;
}

/** Reads the derived hourly CSV (`.csv` or `.csv.gz`): one row per VM and hour. */
export async function loadBitbrainsHourly(path: string): Promise<VmSeries[]> {
  const text = await readTextFile(path);
  refuseTruncated(text, path);
  const lines = text.split('\n');
  const header = (lines[0] ?? '').trim().split(',');
  const col = {} as Record<(typeof HOURLY_COLUMNS)[number], number>;
  for (const name of HOURLY_COLUMNS) {
    const i = header.indexOf(name);
    if (i < 0) {
      throw new InputError([
        { file: path, path: 'line 1', message: `missing column "${name}" in the header` },
      ]);
    }
    col[name] = i;
  }
  const byVm = new Map<string, Sample[]>();
  for (let ln = 1; ln < lines.length; ln++) {
    const line = lines[ln] as string;
    if (line.trim() === '') continue;
    const f = line.split(',');
    if (f.length !== header.length) {
      throw new InputError([
        {
          file: path,
          path: `line ${ln + 1}`,
          message: `expected ${header.length} comma-separated fields as in the header, got ${f.length} (a truncated row?)`,
        },
      ]);
    }
    const num = (name: Exclude<(typeof HOURLY_COLUMNS)[number], 'vm_id'>): number =>
      parseField(f[col[name]], path, ln + 1, name);
    const id = (f[col.vm_id] ?? '').trim();
    if (id === '')
      throw new InputError([{ file: path, path: `line ${ln + 1}.vm_id`, message: 'empty VM id' }]);
    let rows = byVm.get(id);
    if (rows === undefined) {
      rows = [];
      byVm.set(id, rows);
    }
    rows.push({
      ts: num('hour_ts_s'),
      cores: num('cpu_cores'),
      capacityMhz: num('cpu_capacity_mhz'),
      memCapacityKB: num('mem_capacity_kb'),
      cpuMhz: num('cpu_mhz_mean'),
      memKB: num('mem_kb_mean'),
    });
  }
  if (byVm.size === 0) throw new InputError([{ file: path, path: '', message: 'no data rows' }]);
  return [...byVm].map(([id, rows]) => toSeries(id, rows, path));
}

/**
 * Reads a folder of original per-VM CSVs (`<n>.csv` or `<n>.csv.gz`, `;`-separated, 5-minute
 * samples, timestamp in seconds despite the header) and averages them into hourly buckets,
 * as the derived hourly file was made. Series come out in numeric file-name order.
 */
export async function loadBitbrainsRaw(dir: string): Promise<VmSeries[]> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new InputError([
      { file: dir, path: '', message: code === 'ENOENT' ? 'no such folder' : `cannot read (${code})` },
    ]);
  }
  const files = names
    .map((name) => ({ name, id: /^(.+)\.csv(\.gz)?$/.exec(name)?.[1] }))
    .filter((f): f is { name: string; id: string } => f.id !== undefined)
    .sort((a, b) => compareIds(a.id, b.id));
  if (files.length === 0)
    throw new InputError([{ file: dir, path: '', message: 'no *.csv or *.csv.gz files' }]);
  const out: VmSeries[] = [];
  for (const { name, id } of files) {
    const file = join(dir, name);
    const text = await readTextFile(file);
    refuseTruncated(text, file);
    out.push(toSeries(id, hourlyBuckets(parseRawCsv(text, file)), file));
  }
  return out;
}

/**
 * Loads series from whatever Bitbrains path is given: a derived hourly CSV; a folder of
 * original per-VM CSVs; or a traces folder laid out as ../shared/traces/bitbrains-rnd
 * (derived/hourly_*.csv.gz preferred, else the raw-* folder).
 */
export async function loadBitbrains(path: string): Promise<VmSeries[]> {
  let st: Stats;
  try {
    st = await stat(path);
  } catch {
    throw new InputError([{ file: path, path: '', message: 'no such file or folder' }]);
  }
  if (!st.isDirectory()) return loadBitbrainsHourly(path);
  const names = (await readdir(path)).sort();
  const hourlyHere = names.find((n) => /^hourly.*\.csv(\.gz)?$/.test(n));
  if (hourlyHere !== undefined) return loadBitbrainsHourly(join(path, hourlyHere));
  if (names.includes('derived')) {
    const derived = (await readdir(join(path, 'derived')))
      .sort()
      .find((n) => /^hourly.*\.csv(\.gz)?$/.test(n));
    if (derived !== undefined) return loadBitbrainsHourly(join(path, 'derived', derived));
  }
  const raw = names.find((n) => n.startsWith('raw'));
  if (raw !== undefined) return loadBitbrainsRaw(join(path, raw));
  return loadBitbrainsRaw(path);
}

/**
 * The hourly series to use by default: the full month from the shared traces folder when present
 * (next to the project), else the sample shipped in data/; undefined when neither exists.
 */
export function findBitbrainsHourly(): string | undefined {
  const packageRoot = fileURLToPath(new URL('../../', import.meta.url));
  const candidates = [
    resolve(process.cwd(), HOURLY_RELATIVE),
    resolve(packageRoot, HOURLY_RELATIVE),
    resolve(process.cwd(), SAMPLE_RELATIVE),
    resolve(packageRoot, SAMPLE_RELATIVE),
  ];
  return candidates.find((p) => existsSync(p));
}

function toSeries(id: string, rows: Sample[], file: string): VmSeries {
  rows.sort((a, b) => a.ts - b.ts);
  for (let i = 1; i < rows.length; i++) {
    if ((rows[i] as Sample).ts === (rows[i - 1] as Sample).ts) {
      throw new InputError([
        { file, path: `vm ${id}`, message: 'two rows for the same hour', value: (rows[i] as Sample).ts },
      ]);
    }
  }
  const first = rows[0] as Sample;
  const last = rows[rows.length - 1] as Sample;
  const startTs = Math.floor(first.ts / BITBRAINS_STEP_SECONDS) * BITBRAINS_STEP_SECONDS;
  const steps = Math.floor((last.ts - startTs) / BITBRAINS_STEP_SECONDS) + 1;

  // A VM that is switched off reports 0 cores and 0 capacity; its size is what it had when on.
  let cores = 0;
  let memCapacityKB = 0;
  for (const r of rows) {
    cores = Math.max(cores, r.cores);
    memCapacityKB = Math.max(memCapacityKB, r.memCapacityKB);
  }
  cores = Math.max(1, Math.round(cores));
  const memCapacityMB = Math.max(MIN_MEM_CAPACITY_MB, Math.round(memCapacityKB / 1024));

  const cpuCores = new Float32Array(steps);
  const memMB = new Float32Array(steps);
  let filled = -1;
  for (const r of rows) {
    const step = Math.floor((r.ts - startTs) / BITBRAINS_STEP_SECONDS);
    // Hours missing from the trace repeat the last known hour rather than dropping to idle.
    for (let s = filled + 1; s < step; s++) {
      cpuCores[s] = filled >= 0 ? (cpuCores[filled] as number) : 0;
      memMB[s] = filled >= 0 ? (memMB[filled] as number) : 0;
    }
    // The usage in MHz can exceed the provisioned MHz (turbo, accounting); a VM cannot keep
    // more cores busy than it has.
    const mhzPerCore = r.cores > 0 ? r.capacityMhz / r.cores : 0;
    cpuCores[step] = mhzPerCore > 0 ? clamp(r.cpuMhz / mhzPerCore, 0, cores) : 0;
    memMB[step] = clamp(r.memKB / 1024, 0, memCapacityMB);
    filled = step;
  }
  return { id, cores, memCapacityMB, stepSeconds: BITBRAINS_STEP_SECONDS, startTs, cpuCores, memMB };
}

/** Original file columns (by position): ts; cores; capacity MHz; usage MHz; usage %; mem capacity KB; mem usage KB; ... */
function parseRawCsv(text: string, file: string): Sample[] {
  const lines = text.split('\n');
  const out: Sample[] = [];
  for (let ln = 1; ln < lines.length; ln++) {
    const line = lines[ln] as string;
    if (line.trim() === '') continue;
    const f = line.split(';');
    if (f.length < 7) {
      throw new InputError([
        {
          file,
          path: `line ${ln + 1}`,
          message: `expected at least 7 ";"-separated fields, got ${f.length}`,
        },
      ]);
    }
    const num = (i: number, name: string): number => parseField(f[i], file, ln + 1, name);
    out.push({
      ts: num(0, 'Timestamp'),
      cores: num(1, 'CPU cores'),
      capacityMhz: num(2, 'CPU capacity provisioned [MHZ]'),
      cpuMhz: num(3, 'CPU usage [MHZ]'),
      memCapacityKB: num(5, 'Memory capacity provisioned [KB]'),
      memKB: num(6, 'Memory usage [KB]'),
    });
  }
  if (out.length === 0) throw new InputError([{ file, path: '', message: 'no data rows' }]);
  return out;
}

/** Mean of usage per hour; sizes from the first sample of the hour (as the derived file does). */
function hourlyBuckets(samples: Sample[]): Sample[] {
  const buckets = new Map<number, { first: Sample; n: number; cpu: number; mem: number }>();
  for (const s of samples) {
    const hour = Math.floor(s.ts / BITBRAINS_STEP_SECONDS) * BITBRAINS_STEP_SECONDS;
    const b = buckets.get(hour);
    if (b === undefined) buckets.set(hour, { first: s, n: 1, cpu: s.cpuMhz, mem: s.memKB });
    else {
      b.n++;
      b.cpu += s.cpuMhz;
      b.mem += s.memKB;
    }
  }
  return [...buckets].map(([ts, b]) => ({ ...b.first, ts, cpuMhz: b.cpu / b.n, memKB: b.mem / b.n }));
}

/**
 * Every Bitbrains file ends its last row with a newline; a file that does not was cut short (a
 * copy or download stopped), and its last row may hold half a number that still parses.
 */
function refuseTruncated(text: string, file: string): void {
  if (text === '' || text.endsWith('\n')) return;
  const line = text.split('\n').length;
  throw new InputError([
    {
      file,
      path: `line ${line}`,
      message:
        'the last row has no line end, so the file looks truncated (add the newline if the row is complete)',
    },
  ]);
}

function parseField(raw: string | undefined, file: string, line: number, name: string): number {
  const v = raw === undefined ? Number.NaN : Number(raw.trim());
  if (raw === undefined || raw.trim() === '' || !Number.isFinite(v) || v < 0) {
    throw new InputError([
      { file, path: `line ${line}.${name}`, message: 'expected a non-negative number', value: raw?.trim() },
    ]);
  }
  return v;
}

function compareIds(a: string, b: string): number {
  const na = Number(a);
  const nb = Number(b);
  if (Number.isInteger(na) && Number.isInteger(nb)) return na - nb;
  return a < b ? -1 : a > b ? 1 : 0;
}

function clamp(v: number, lo: number, hi: number): number {
  return Math.max(lo, Math.min(hi, v));
}
