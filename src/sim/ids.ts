// Deterministic identifiers: the same seed and name always give the same UUID, so two
// simulator runs from one snapshot are indistinguishable to a client.
import { createHash } from 'node:crypto';

export function stableUuid(...parts: (string | number)[]): string {
  const h = createHash('sha1').update(parts.join('\u0000')).digest('hex');
  // Version 5 style layout (name-based, SHA-1), variant 10xx.
  const variant = ((Number.parseInt(h.slice(16, 17), 16) & 0x3) | 0x8).toString(16);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** Non-deterministic request ids are fine: they only correlate logs. */
export function requestId(): string {
  return `req-${crypto.randomUUID()}`;
}

/** 32-hex ids as Keystone uses for users, projects and credentials. */
export function keystoneId(...parts: (string | number)[]): string {
  return createHash('sha1').update(parts.join('\u0000')).digest('hex').slice(0, 32);
}

/** A stable hash of a string to an unsigned 32-bit integer. */
export function hash32(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}
