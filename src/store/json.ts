// JSON values as the store keeps them in text columns.

import type { JsonValue } from '../records/json.js';

export type { JsonValue } from '../records/json.js';

/** Parses a column the store wrote itself with JSON.stringify. */
export function parseJson(text: string): JsonValue {
  return JSON.parse(text) as JsonValue;
}

export function parseStringArray(text: string): string[] {
  const value = parseJson(text);
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}
