// Times cross the store boundary as ISO-8601 UTC strings and are kept as epoch milliseconds.

import { StoreError } from './errors.js';

// A date and time with a zone (Z or an offset): a time without one would be read as local time.
const ISO_WITH_ZONE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/;

/** Milliseconds since the epoch for an ISO-8601 time; `field` names the argument in the error. */
export function toMs(iso: string, field: string): number {
  const ms = ISO_WITH_ZONE.test(iso) ? Date.parse(iso) : Number.NaN;
  if (!Number.isFinite(ms))
    throw new StoreError(
      `store: ${field} must be an ISO-8601 time with a zone (e.g. 2026-11-29T14:00:00Z), got ${JSON.stringify(iso)}`,
    );
  return ms;
}

export function toMsOrNull(iso: string | null | undefined, field: string): number | null {
  return iso === null || iso === undefined ? null : toMs(iso, field);
}

/** The stored time as an ISO-8601 UTC string with milliseconds (`2026-11-29T14:00:00.000Z`). */
export function fromMs(ms: number | string | bigint): string {
  return new Date(Number(ms)).toISOString();
}

export function fromMsOrNull(ms: number | string | bigint | null): string | null {
  return ms === null ? null : fromMs(ms);
}
