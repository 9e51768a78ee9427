// Narrowing helpers for JSON answers: a missing or mistyped field becomes a clear protocol
// error naming the field, never an `undefined` deep inside the planner.
import { CloudError } from '../errors.js';

export type Rec = Record<string, unknown>;

export function asRec(v: unknown, what: string): Rec {
  if (!v || typeof v !== 'object' || Array.isArray(v))
    throw new CloudError('protocol', `${what}: expected an object`);
  return v as Rec;
}

export function reqStr(r: Rec, key: string, what: string): string {
  const v = r[key];
  if (typeof v === 'string') return v;
  if (typeof v === 'number') return String(v);
  throw new CloudError('protocol', `${what}.${key}: expected a string, got ${JSON.stringify(v)}`);
}

export function optStr(r: Rec, key: string): string | null {
  const v = r[key];
  if (typeof v === 'string') return v;
  if (typeof v === 'number') return String(v);
  return null;
}

export function reqNum(r: Rec, key: string, what: string): number {
  const v = r[key];
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  if (typeof v === 'string' && v !== '' && Number.isFinite(Number(v))) return Number(v);
  throw new CloudError('protocol', `${what}.${key}: expected a number, got ${JSON.stringify(v)}`);
}

export function optNum(r: Rec, key: string): number | null {
  const v = r[key];
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}

export function strMap(v: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (v && typeof v === 'object' && !Array.isArray(v)) {
    for (const [k, val] of Object.entries(v)) if (val !== null && val !== undefined) out[k] = String(val);
  }
  return out;
}

export function strList(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((x) => x !== null && x !== undefined).map(String) : [];
}
