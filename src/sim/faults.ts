// Fault injection for the simulated APIs: server errors, slow answers and timeouts on requests
// whose "METHOD /path" matches a pattern, at a rate, optionally a limited number of times.
import { createRng, type Rng } from '../util/rng.js';

export type FaultKind = 'error' | 'slow' | 'timeout';

export interface FaultRule {
  id: number;
  /** Regular expression tested against "METHOD /path" (path as the client sent it, without query). */
  pattern: string;
  kind: FaultKind;
  /** Probability in [0, 1] that a matching request is hit. */
  rate: number;
  /** error: the HTTP status (default 503): a 5xx, or 409 (Nova's and Placement's conflicts). */
  status: number;
  /** slow: added delay; timeout: how long the connection hangs before it is dropped. */
  delayMs: number;
  /** Hits left; null: unlimited. */
  remaining: number | null;
  hits: number;
}

export interface FaultSpec {
  pattern: string;
  kind: FaultKind;
  rate?: number;
  status?: number;
  delayMs?: number;
  count?: number | null;
}

export class FaultInjector {
  private rules: FaultRule[] = [];
  private nextId = 1;
  private readonly compiled = new Map<number, RegExp>();
  private readonly rng: Rng;

  constructor(seed = 1) {
    this.rng = createRng(seed);
  }

  add(spec: FaultSpec): FaultRule {
    const re = new RegExp(spec.pattern);
    const rate = spec.rate ?? 1;
    if (!(rate >= 0 && rate <= 1))
      throw new RangeError(`fault rate: expected a number in [0, 1], got ${spec.rate}`);
    const status = spec.status ?? 503;
    if (spec.kind === 'error' && !(status >= 500 && status <= 599) && status !== 409) {
      throw new RangeError(`fault status: expected a 5xx status or 409, got ${spec.status}`);
    }
    const rule: FaultRule = {
      id: this.nextId++,
      pattern: spec.pattern,
      kind: spec.kind,
      rate,
      status,
      delayMs: spec.delayMs ?? (spec.kind === 'timeout' ? 120_000 : 2_000),
      remaining: spec.count ?? null,
      hits: 0,
    };
    this.rules.push(rule);
    this.compiled.set(rule.id, re);
    return rule;
  }

  remove(id: number): boolean {
    const before = this.rules.length;
    this.rules = this.rules.filter((r) => r.id !== id);
    this.compiled.delete(id);
    return this.rules.length < before;
  }

  clear(): void {
    this.rules = [];
    this.compiled.clear();
  }

  list(): readonly FaultRule[] {
    return this.rules;
  }

  /** The first rule that hits this request, if any (and counts the hit). */
  decide(method: string, path: string): FaultRule | undefined {
    const key = `${method} ${path}`;
    for (const r of this.rules) {
      if (r.remaining === 0) continue;
      if (!(this.compiled.get(r.id) as RegExp).test(key)) continue;
      if (r.rate < 1 && this.rng.next() >= r.rate) continue;
      r.hits++;
      if (r.remaining !== null) r.remaining--;
      return r;
    }
    return undefined;
  }
}
