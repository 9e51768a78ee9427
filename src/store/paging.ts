// Paging for every list: newest (or first) `limit` rows, and a cursor that continues after the
// last row returned. Cursors are opaque to callers; they are only valid for the list that made them.

import { StoreError } from './errors.js';

export interface PageRequest {
  /** Rows per page: 1..1000, default 100. */
  limit?: number;
  /** The `nextCursor` of the previous page; absent or null for the first page. */
  cursor?: string | null;
}

export interface Page<T> {
  items: T[];
  /** Pass back as `cursor` for the next page; null when this page is the last. */
  nextCursor: string | null;
}

export const DEFAULT_PAGE_LIMIT = 100;
export const MAX_PAGE_LIMIT = 1000;

export function pageLimit(request: PageRequest | undefined): number {
  const limit = request?.limit ?? DEFAULT_PAGE_LIMIT;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE_LIMIT)
    throw new StoreError(`store: page limit must be an integer from 1 to ${MAX_PAGE_LIMIT}, got ${limit}`);
  return limit;
}

/** The id after which an id-ordered page continues, or null for the first page. */
export function idCursor(request: PageRequest | undefined): number | null {
  const cursor = request?.cursor;
  if (cursor === undefined || cursor === null) return null;
  if (!/^\d{1,15}$/.test(cursor))
    throw new StoreError(`store: not a cursor of this list: ${JSON.stringify(cursor)}`);
  return Number(cursor);
}

/** A key cursor (rows ordered by a text key): any non-empty string. */
export function keyCursor(request: PageRequest | undefined): string | null {
  const cursor = request?.cursor;
  if (cursor === undefined || cursor === null) return null;
  if (cursor === '') throw new StoreError('store: a cursor must not be empty');
  return cursor;
}

/** Cuts the `limit + 1` rows a query fetched into a page (the extra row only says "there is more"). */
export function toPage<R, T>(
  rows: R[],
  limit: number,
  item: (row: R) => T,
  cursorOf: (row: R) => string,
): Page<T> {
  const more = rows.length > limit;
  const kept = more ? rows.slice(0, limit) : rows;
  const last = kept[kept.length - 1];
  return { items: kept.map(item), nextCursor: more && last !== undefined ? cursorOf(last) : null };
}
