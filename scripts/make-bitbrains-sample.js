#!/usr/bin/env node
// Makes data/bitbrains-sample/hourly-sample.csv.gz from the shared derived hourly file:
// the first VMS VMs (in file order) and their first DAYS days, rows copied unchanged.
// Usage: node scripts/make-bitbrains-sample.js [SOURCE.csv.gz] [OUT.csv.gz]
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync, gzipSync } from 'node:zlib';

const VMS = 300;
const DAYS = 7;

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const source =
  process.argv[2] ?? resolve(root, '../shared/traces/bitbrains-rnd/derived/hourly_2013-8.csv.gz');
const out = process.argv[3] ?? resolve(root, 'data/bitbrains-sample/hourly-sample.csv.gz');

const lines = gunzipSync(readFileSync(source)).toString('utf8').split('\n');
const header = lines[0].trim();
const cols = header.split(',');
const idCol = cols.indexOf('vm_id');
const tsCol = cols.indexOf('hour_ts_s');
if (idCol < 0 || tsCol < 0) throw new Error(`${source}: header lacks vm_id or hour_ts_s: ${header}`);

const rows = lines.slice(1).filter((l) => l.trim() !== '');
// The window starts at the month's first hour, so every sampled VM covers the same 7 days.
const start = rows.reduce((m, l) => Math.min(m, Number(l.split(',')[tsCol])), Number.POSITIVE_INFINITY);
const end = start + DAYS * 86400;
const kept = new Set();
const outLines = [header];
for (const line of rows) {
  const f = line.split(',');
  const id = f[idCol];
  if (!kept.has(id)) {
    if (kept.size >= VMS) continue;
    kept.add(id);
  }
  const ts = Number(f[tsCol]);
  if (ts >= start && ts < end) outLines.push(line.trim());
}
writeFileSync(out, gzipSync(`${outLines.join('\n')}\n`, { level: 9 }));
process.stdout.write(`${out}: ${kept.size} VMs, ${outLines.length - 1} rows, hours [${start}, ${end})\n`);
