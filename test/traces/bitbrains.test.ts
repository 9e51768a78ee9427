import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InputError } from '../../src/errors.js';
import {
  findBitbrainsHourly,
  loadBitbrains,
  loadBitbrainsHourly,
  loadBitbrainsRaw,
  MIN_MEM_CAPACITY_MB,
  type VmSeries,
} from '../../src/traces/bitbrains.js';

const ROOT = resolve(import.meta.dirname, '../..');
const SHARED = resolve(ROOT, '../shared/traces/bitbrains-rnd');
const SHARED_HOURLY = join(SHARED, 'derived/hourly_2013-8.csv.gz');
const SHARED_RAW = join(SHARED, 'raw-2013-8');
const SAMPLE = join(ROOT, 'data/bitbrains-sample/hourly-sample.csv.gz');

const HEADER =
  'vm_id,hour_ts_s,cpu_cores,cpu_capacity_mhz,mem_capacity_kb,cpu_mhz_mean,cpu_mhz_max,mem_kb_mean,mem_kb_max,disk_read_kbps_mean,disk_write_kbps_mean,net_rx_kbps_mean,net_tx_kbps_mean';
const T0 = 1375308000;

function row(
  id: string,
  hour: number,
  cores: number,
  capMhz: number,
  memCapKB: number,
  mhz: number,
  memKB: number,
): string {
  return `${id},${T0 + hour * 3600},${cores},${capMhz},${memCapKB},${mhz},${mhz},${memKB},${memKB},0,0,0,0`;
}

let dir = '';
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'aicerine-bitbrains-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function expectSane(series: readonly VmSeries[]): void {
  for (const s of series) {
    expect(s.cores).toBeGreaterThanOrEqual(1);
    expect(s.memCapacityMB).toBeGreaterThanOrEqual(MIN_MEM_CAPACITY_MB);
    expect(s.stepSeconds).toBe(3600);
    expect(s.cpuCores.length).toBe(s.memMB.length);
    expect(s.cpuCores.length).toBeGreaterThan(0);
    // One expect per series: hundreds of thousands of expect calls would take minutes.
    let outside = 0;
    for (let i = 0; i < s.cpuCores.length; i++) {
      const cpu = s.cpuCores[i] as number;
      const mem = s.memMB[i] as number;
      if (!(cpu >= 0 && cpu <= s.cores && mem >= 0 && mem <= s.memCapacityMB)) outside++;
    }
    expect(outside, `VM ${s.id}: steps outside 0..capacity`).toBe(0);
  }
}

describe('loadBitbrainsHourly', () => {
  it('turns MHz into busy cores and KB into MiB, per VM, in file order', async () => {
    const file = join(dir, 'basic.csv');
    await writeFile(
      file,
      [
        HEADER,
        row('7', 0, 2, 5200, 8388608, 1300, 1048576),
        row('7', 1, 2, 5200, 8388608, 2600, 2097152),
        row('3', 0, 4, 10400, 4194304, 0, 0),
        '',
      ].join('\n'),
    );
    const [a, b] = await loadBitbrainsHourly(file);
    expect(a?.id).toBe('7');
    expect(a?.cores).toBe(2);
    expect(a?.memCapacityMB).toBe(8192);
    expect(a?.startTs).toBe(T0);
    expect(Array.from(a?.cpuCores ?? [])).toEqual([0.5, 1]);
    expect(Array.from(a?.memMB ?? [])).toEqual([1024, 2048]);
    expect(b?.id).toBe('3');
    expect(Array.from(b?.cpuCores ?? [])).toEqual([0]);
  });

  it('clamps the quirks: 0 cores while off, tiny memory, usage above capacity; fills missing hours', async () => {
    const file = join(dir, 'quirks.csv.gz');
    const text = [
      HEADER,
      row('20', 0, 0, 0, 0, 0, 0),
      row('20', 1, 1, 2600, 262144, 3900, 600000),
      row('20', 3, 1, 2600, 262144, 1300, 1024),
      row('21', 0, 0, 0, 0, 0, 0),
      '',
    ].join('\n');
    await writeFile(file, gzipSync(text));
    const [off, never] = await loadBitbrainsHourly(file);
    expect(off?.cores).toBe(1);
    expect(off?.memCapacityMB).toBe(MIN_MEM_CAPACITY_MB);
    // hour 0: off; hour 1: 1.5 cores asked, 1 available; memory capped; hour 2 missing: repeats hour 1.
    expect(Array.from(off?.cpuCores ?? [])).toEqual([0, 1, 1, 0.5]);
    expect(Array.from(off?.memMB ?? [])).toEqual([0, MIN_MEM_CAPACITY_MB, MIN_MEM_CAPACITY_MB, 1]);
    expect(never?.cores).toBe(1);
    expect(Array.from(never?.cpuCores ?? [])).toEqual([0]);
  });

  it('refuses a file without a needed column, naming the column', async () => {
    const file = join(dir, 'nocol.csv');
    await writeFile(file, 'vm_id,hour_ts_s,cpu_cores\n1,0,1\n');
    await expect(loadBitbrainsHourly(file)).rejects.toThrow(
      `${file}: line 1: missing column "cpu_capacity_mhz"`,
    );
  });

  it('refuses a bad number with file, line, column and value', async () => {
    const file = join(dir, 'bad.csv');
    await writeFile(
      file,
      [HEADER, row('1', 0, 2, 5200, 8388608, 100, 100).replace(',5200,', ',fast,'), ''].join('\n'),
    );
    const err = await loadBitbrainsHourly(file).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InputError);
    expect((err as InputError).issues[0]).toMatchObject({
      file,
      path: 'line 2.cpu_capacity_mhz',
      value: 'fast',
    });
  });

  it('refuses two rows for the same VM and hour, and a missing file', async () => {
    const file = join(dir, 'dup.csv');
    await writeFile(
      file,
      [HEADER, row('1', 0, 2, 5200, 8388608, 1, 1), row('1', 0, 2, 5200, 8388608, 1, 1), ''].join('\n'),
    );
    await expect(loadBitbrainsHourly(file)).rejects.toThrow('vm 1: two rows for the same hour');
    await expect(loadBitbrainsHourly(join(dir, 'nope.csv'))).rejects.toThrow('nope.csv: no such file');
  });
});

describe('a truncated Bitbrains file', () => {
  it('is refused, naming the file and the line, when its last row has no line end', async () => {
    const file = join(dir, 'cut.csv');
    const whole = [
      HEADER,
      row('1', 0, 2, 5200, 8388608, 1300, 1048576),
      row('2', 0, 2, 5200, 8388608, 1300, 1048576),
    ];
    await writeFile(file, `${whole.join('\n').slice(0, -4)}`);
    await expect(loadBitbrainsHourly(file)).rejects.toThrow(
      `${file}: line 3: the last row has no line end, so the file looks truncated`,
    );
  });

  it('is refused when a row has fewer fields than the header', async () => {
    const file = join(dir, 'short.csv');
    const cut = row('2', 0, 2, 5200, 8388608, 1300, 1048576).split(',').slice(0, 4).join(',');
    await writeFile(file, [HEADER, row('1', 0, 2, 5200, 8388608, 1300, 1048576), cut, ''].join('\n'));
    await expect(loadBitbrainsHourly(file)).rejects.toThrow(
      `${file}: line 3: expected ${HEADER.split(',').length} comma-separated fields as in the header, got 4`,
    );
  });
});

describe('loadBitbrainsRaw', () => {
  const RAW_HEADER =
    'Timestamp [ms];\tCPU cores;\tCPU capacity provisioned [MHZ];\tCPU usage [MHZ];\tCPU usage [%];\tMemory capacity provisioned [KB];\tMemory usage [KB];\tDisk read throughput [KB/s];\tDisk write throughput [KB/s];\tNetwork received throughput [KB/s];\tNetwork transmitted throughput [KB/s]';
  const raw = (ts: number, mhz: number, memKB: number): string =>
    `${ts};\t2;\t5200.0;\t${mhz};\t0;\t4194304.0;\t${memKB};\t0;\t0;\t0;\t0`;

  it('averages 5-minute samples into hours, one series per file, in numeric order', async () => {
    const rawDir = join(dir, 'raw');
    await mkdir(rawDir);
    await writeFile(
      join(rawDir, '10.csv.gz'),
      gzipSync(
        [RAW_HEADER, raw(T0 + 10, 1300, 1024), raw(T0 + 310, 3900, 3072), raw(T0 + 3610, 0, 0), ''].join(
          '\n',
        ),
      ),
    );
    await writeFile(join(rawDir, '9.csv'), [RAW_HEADER, raw(T0 + 5, 2600, 2048), ''].join('\n'));
    await writeFile(join(rawDir, 'README'), 'not a trace');
    const series = await loadBitbrainsRaw(rawDir);
    expect(series.map((s) => s.id)).toEqual(['9', '10']);
    const [, ten] = series;
    expect(ten?.startTs).toBe(T0);
    expect(Array.from(ten?.cpuCores ?? [])).toEqual([1, 0]);
    expect(Array.from(ten?.memMB ?? [])).toEqual([2, 0]);
    expect(ten?.memCapacityMB).toBe(4096);
  });

  it('refuses a short row with file and line', async () => {
    const bad = join(dir, 'rawbad');
    await mkdir(bad);
    await writeFile(join(bad, '1.csv'), `${RAW_HEADER}\n${T0};\t2\n`);
    await expect(loadBitbrainsRaw(bad)).rejects.toThrow(
      /1\.csv: line 2: expected at least 7 ";"-separated fields, got 2/,
    );
  });
});

describe('the shipped sample', () => {
  it('exists, is small, and holds 300 VMs of 7 days', async () => {
    expect(existsSync(SAMPLE)).toBe(true);
    const series = await loadBitbrainsHourly(SAMPLE);
    expect(series).toHaveLength(300);
    for (const s of series) expect(s.cpuCores.length).toBe(168);
    expectSane(series);
    // Real data: most VMs nearly idle, a few busy.
    const means = series
      .map((s) => s.cpuCores.reduce((a, b) => a + b, 0) / s.cpuCores.length / s.cores)
      .sort();
    expect(means[150] as number).toBeLessThan(0.1);
    expect(means[299] as number).toBeGreaterThan(0.3);
  });

  it('is found by findBitbrainsHourly when the shared trace is absent', () => {
    const found = findBitbrainsHourly();
    expect(found === SHARED_HOURLY || found === SAMPLE).toBe(true);
    expect(found).toBe(existsSync(SHARED_HOURLY) ? SHARED_HOURLY : SAMPLE);
  });
});

describe.runIf(existsSync(SHARED_HOURLY))('the shared hourly trace (../shared/traces/bitbrains-rnd)', () => {
  it('loads all 500 VMs of 2013-08', async () => {
    const series = await loadBitbrainsHourly(SHARED_HOURLY);
    expect(series).toHaveLength(500);
    expectSane(series);
    const vm1 = series.find((s) => s.id === '1') as VmSeries;
    expect(vm1.cores).toBe(2);
    expect(vm1.memCapacityMB).toBe(8192);
    expect(vm1.cpuCores[0]).toBeCloseTo(719.8 / (5851.999 / 2), 4);
    expect(vm1.memMB[0]).toBeCloseTo(963289 / 1024, 2);
  });

  it('agrees with the raw files it was derived from', async () => {
    const [hourly, raw] = await Promise.all([
      loadBitbrainsHourly(SHARED_HOURLY),
      loadBitbrainsRaw(SHARED_RAW),
    ]);
    expect(raw).toHaveLength(100);
    const byId = new Map(hourly.map((s) => [s.id, s]));
    for (const r of raw.slice(0, 10)) {
      const h = byId.get(r.id) as VmSeries;
      expect(r.startTs).toBe(h.startTs);
      expect(r.cores).toBe(h.cores);
      for (const i of [0, 100, 500]) {
        expect(r.cpuCores[i]).toBeCloseTo(h.cpuCores[i] as number, 1);
        expect(Math.abs((r.memMB[i] as number) - (h.memMB[i] as number))).toBeLessThan(1);
      }
    }
  });

  it('is found from the traces folder by loadBitbrains', async () => {
    const series = await loadBitbrains(SHARED);
    expect(series).toHaveLength(500);
  });
});
