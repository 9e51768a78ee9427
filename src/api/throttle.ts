// Password guessing through POST /v1/auth/tokens: failed logins are counted per user name and per
// client address over a sliding window; past the limit the login is refused before Keystone is
// asked. Whether the name exists plays no part (a refusal is a refusal), so the answer says
// nothing about it. A login that is not over the limit costs two map lookups.
import type { LoginThrottleConfig } from '../config/types.js';

/** Most names and addresses tracked; the oldest go first, so a flood of names cannot grow memory. */
const MAX_KEYS = 10_000;

export class LoginThrottle {
  private readonly names = new Map<string, number[]>();
  private readonly addresses = new Map<string, number[]>();

  constructor(
    private readonly cfg: LoginThrottleConfig,
    private readonly now: () => number = Date.now,
  ) {}

  /** Seconds until a login for this name from this address may be tried again; null: now. */
  retryAfter(name: string, address: string): number | null {
    const t = this.now();
    const wait = Math.max(
      this.wait(this.names, nameKey(name), this.cfg.perName, t),
      this.wait(this.addresses, address, this.cfg.perAddress, t),
    );
    return wait > 0 ? Math.max(1, Math.ceil(wait / 1000)) : null;
  }

  failed(name: string, address: string): void {
    const t = this.now();
    this.add(this.names, nameKey(name), t);
    this.add(this.addresses, address, t);
  }

  /** The user got in: their name's mistakes are forgiven (the address's are not, or a guesser
   * with one account of their own could clear the address count with it). */
  succeeded(name: string): void {
    this.names.delete(nameKey(name));
  }

  private recent(map: Map<string, number[]>, key: string, t: number): number[] {
    const times = map.get(key);
    if (times === undefined) return [];
    const kept = times.filter((at) => t - at < this.cfg.windowMs);
    if (kept.length === 0) map.delete(key);
    else map.set(key, kept);
    return kept;
  }

  private wait(map: Map<string, number[]>, key: string, limit: number, t: number): number {
    const times = this.recent(map, key, t);
    if (times.length < limit) return 0;
    // The oldest failures that keep the count at the limit must leave the window first.
    return times[times.length - limit]! + this.cfg.windowMs - t;
  }

  private add(map: Map<string, number[]>, key: string, t: number): void {
    const times = this.recent(map, key, t);
    if (!map.has(key) && map.size >= MAX_KEYS) {
      const oldest = map.keys().next().value;
      if (oldest !== undefined) map.delete(oldest);
    }
    map.delete(key);
    map.set(key, [...times, t]);
  }
}

/** Keystone compares user names without case in its usual (MySQL) backend. */
function nameKey(name: string): string {
  return name.toLowerCase();
}
