// A small PromQL evaluator: enough of the language for the queries Aicerine's metrics policies
// use (selectors with matchers, rate/irate/increase over a range, sum/avg/min/max/count by,
// arithmetic between vectors and scalars). Anything else is refused as bad_data, so a query
// the simulator cannot answer fails loudly rather than returning something wrong.

export interface Series {
  labels: Record<string, string>;
  /** Gauge value, or for counters the value at time t. */
  at(t: number): number;
  /** Counters: the per-second rate averaged over [t - window, t]. */
  rate?: (t: number, windowSeconds: number) => number;
}

export type SeriesSource = (metricName: string) => Series[];

export interface VectorSample {
  labels: Record<string, string>;
  value: number;
}

export type Value = { kind: 'vector'; samples: VectorSample[] } | { kind: 'scalar'; value: number };

export class PromQLError extends Error {}

type Matcher = { name: string; op: '=' | '!=' | '=~' | '!~'; value: string };

type Node =
  | { t: 'num'; v: number }
  | { t: 'sel'; name: string | null; matchers: Matcher[]; range: number | null }
  | { t: 'fn'; name: string; arg: Node }
  | { t: 'timestamp'; arg: Node }
  | { t: 'agg'; op: string; by: string[] | null; without: boolean; arg: Node }
  | { t: 'bin'; op: string; l: Node; r: Node };

const AGGS = new Set(['sum', 'avg', 'min', 'max', 'count']);
const RANGE_FNS = new Set(['rate', 'irate', 'increase']);

/**
 * Evaluates at model time `t`; `sampleTs` is what timestamp() reports (the scrape time, on the
 * caller's clock).
 */
export function evaluate(query: string, source: SeriesSource, t: number, sampleTs = t): Value {
  const ast = new Parser(query).parseAll();
  return evalNode(ast, source, t, sampleTs);
}

class Parser {
  private i = 0;
  constructor(private readonly s: string) {}

  parseAll(): Node {
    const n = this.expr();
    this.ws();
    if (this.i < this.s.length) this.fail(`unexpected character ${JSON.stringify(this.s[this.i])}`);
    return n;
  }

  private fail(msg: string): never {
    throw new PromQLError(`parse error at char ${this.i + 1}: ${msg}`);
  }

  private ws(): void {
    while (this.i < this.s.length && /\s/.test(this.s[this.i] as string)) this.i++;
  }

  private peek(): string {
    this.ws();
    return this.s[this.i] ?? '';
  }

  private eat(c: string): boolean {
    this.ws();
    if (this.s.startsWith(c, this.i)) {
      this.i += c.length;
      return true;
    }
    return false;
  }

  private expect(c: string): void {
    if (!this.eat(c)) this.fail(`expected ${JSON.stringify(c)}`);
  }

  private ident(): string {
    this.ws();
    const m = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(this.s.slice(this.i));
    if (!m) this.fail('expected an identifier');
    this.i += m[0].length;
    return m[0];
  }

  private expr(): Node {
    let l = this.term();
    for (;;) {
      const c = this.peek();
      if (c === '+' || c === '-') {
        this.i++;
        l = { t: 'bin', op: c, l, r: this.term() };
      } else return l;
    }
  }

  private term(): Node {
    let l = this.factor();
    for (;;) {
      const c = this.peek();
      if (c === '*' || c === '/') {
        this.i++;
        l = { t: 'bin', op: c, l, r: this.factor() };
      } else return l;
    }
  }

  private labelList(): string[] {
    this.expect('(');
    const out: string[] = [];
    if (this.eat(')')) return out;
    do out.push(this.ident());
    while (this.eat(','));
    this.expect(')');
    return out;
  }

  private factor(): Node {
    const c = this.peek();
    if (c === '(') {
      this.i++;
      const n = this.expr();
      this.expect(')');
      return n;
    }
    const num = /^[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?/.exec(this.s.slice(this.i));
    if (num) {
      this.i += num[0].length;
      return { t: 'num', v: Number(num[0]) };
    }
    if (c === '{') return this.selector(null);
    const name = this.ident();
    if (AGGS.has(name)) {
      let by: string[] | null = null;
      let without = false;
      const mod = (): void => {
        const save = this.i;
        this.ws();
        const m = /^(by|without)\b/.exec(this.s.slice(this.i));
        if (m) {
          this.i += m[0].length;
          without = m[1] === 'without';
          by = this.labelList();
        } else this.i = save;
      };
      mod();
      this.expect('(');
      const arg = this.expr();
      this.expect(')');
      if (by === null) mod();
      return { t: 'agg', op: name, by, without, arg };
    }
    if (name === 'timestamp' && this.peek() === '(') {
      this.expect('(');
      const arg = this.expr();
      this.expect(')');
      return { t: 'timestamp', arg };
    }
    if (this.peek() === '(') {
      if (!RANGE_FNS.has(name)) this.fail(`function ${name} is not supported by the simulator`);
      this.expect('(');
      const arg = this.expr();
      this.expect(')');
      if (arg.t !== 'sel' || arg.range === null) this.fail(`${name}() needs a range vector selector`);
      return { t: 'fn', name, arg };
    }
    return this.selector(name);
  }

  private selector(name: string | null): Node {
    const matchers: Matcher[] = [];
    if (this.eat('{')) {
      while (!this.eat('}')) {
        const label = this.ident();
        this.ws();
        const op = (['=~', '!~', '!=', '='] as const).find((o) => this.s.startsWith(o, this.i));
        if (!op) this.fail('expected a label matcher operator');
        this.i += op.length;
        this.ws();
        const q = this.s[this.i];
        if (q !== '"' && q !== "'") this.fail('expected a quoted label value');
        const end = this.s.indexOf(q, this.i + 1);
        if (end < 0) this.fail('unterminated string');
        matchers.push({ name: label, op, value: this.s.slice(this.i + 1, end).replace(/\\\\/g, '\\') });
        this.i = end + 1;
        this.eat(',');
      }
    }
    let metric = name;
    const nm = matchers.findIndex((m) => m.name === '__name__' && m.op === '=');
    if (metric === null && nm >= 0) {
      metric = (matchers[nm] as Matcher).value;
      matchers.splice(nm, 1);
    }
    if (metric === null) this.fail('a selector needs a metric name');
    let range: number | null = null;
    if (this.eat('[')) {
      this.ws();
      const m = /^([0-9]+)(ms|s|m|h|d)/.exec(this.s.slice(this.i));
      if (!m) this.fail('expected a duration');
      this.i += m[0].length;
      this.expect(']');
      const unit: Record<string, number> = { ms: 0.001, s: 1, m: 60, h: 3600, d: 86400 };
      range = Number(m[1]) * (unit[m[2] as string] as number);
    }
    return { t: 'sel', name: metric, matchers, range };
  }
}

function matches(labels: Record<string, string>, ms: Matcher[]): boolean {
  for (const m of ms) {
    const v = labels[m.name] ?? '';
    switch (m.op) {
      case '=':
        if (v !== m.value) return false;
        break;
      case '!=':
        if (v === m.value) return false;
        break;
      case '=~':
        if (!new RegExp(`^(?:${m.value})$`).test(v)) return false;
        break;
      case '!~':
        if (new RegExp(`^(?:${m.value})$`).test(v)) return false;
        break;
    }
  }
  return true;
}

function evalNode(n: Node, src: SeriesSource, t: number, ts: number): Value {
  switch (n.t) {
    case 'num':
      return { kind: 'scalar', value: n.v };
    case 'sel': {
      if (n.range !== null)
        throw new PromQLError(
          'range vector selectors are only supported inside rate(), irate() or increase()',
        );
      const samples = src(n.name as string)
        .filter((s) => matches(s.labels, n.matchers))
        .map((s) => ({ labels: { __name__: n.name as string, ...s.labels }, value: s.at(t) }));
      return { kind: 'vector', samples };
    }
    case 'fn': {
      const sel = n.arg as Extract<Node, { t: 'sel' }>;
      const w = sel.range as number;
      const samples = src(sel.name as string)
        .filter((s) => matches(s.labels, sel.matchers))
        .map((s) => {
          const r = s.rate ? s.rate(t, w) : (s.at(t) - s.at(t - w)) / w;
          return { labels: { ...s.labels }, value: n.name === 'increase' ? r * w : r };
        });
      return { kind: 'vector', samples };
    }
    case 'timestamp': {
      const v = evalNode(n.arg, src, t, ts);
      if (v.kind !== 'vector') throw new PromQLError('timestamp() expects an instant vector');
      return { kind: 'vector', samples: v.samples.map((s) => ({ labels: dropName(s.labels), value: ts })) };
    }
    case 'agg': {
      const v = evalNode(n.arg, src, t, ts);
      if (v.kind !== 'vector') throw new PromQLError(`${n.op}() expects an instant vector`);
      const groups = new Map<string, { labels: Record<string, string>; values: number[] }>();
      for (const s of v.samples) {
        const labels: Record<string, string> = {};
        if (n.by !== null && !n.without)
          for (const l of n.by) if (s.labels[l] !== undefined) labels[l] = s.labels[l] as string;
        if (n.without) {
          for (const [k, val] of Object.entries(s.labels))
            if (k !== '__name__' && !(n.by ?? []).includes(k)) labels[k] = val;
        }
        // One grouping label (the usual "by (instance)") needs no canonical encoding.
        const names = Object.keys(labels);
        const key =
          names.length === 1
            ? (labels[names[0] as string] as string)
            : JSON.stringify(Object.entries(labels).sort());
        let g = groups.get(key);
        if (!g) {
          g = { labels, values: [] };
          groups.set(key, g);
        }
        g.values.push(s.value);
      }
      const samples = [...groups.values()].map((g) => ({
        labels: g.labels,
        value: aggregate(n.op, g.values),
      }));
      return { kind: 'vector', samples };
    }
    case 'bin': {
      const l = evalNode(n.l, src, t, ts);
      const r = evalNode(n.r, src, t, ts);
      const f = (a: number, b: number): number =>
        n.op === '+' ? a + b : n.op === '-' ? a - b : n.op === '*' ? a * b : a / b;
      if (l.kind === 'scalar' && r.kind === 'scalar') return { kind: 'scalar', value: f(l.value, r.value) };
      if (l.kind === 'vector' && r.kind === 'scalar') {
        return {
          kind: 'vector',
          samples: l.samples.map((s) => ({ labels: dropName(s.labels), value: f(s.value, r.value) })),
        };
      }
      if (l.kind === 'scalar' && r.kind === 'vector') {
        return {
          kind: 'vector',
          samples: r.samples.map((s) => ({ labels: dropName(s.labels), value: f(l.value, s.value) })),
        };
      }
      // One-to-one matching on all labels but the metric name.
      const right = new Map<string, number>();
      for (const s of (r as { samples: VectorSample[] }).samples) right.set(signature(s.labels), s.value);
      const samples: VectorSample[] = [];
      for (const s of (l as { samples: VectorSample[] }).samples) {
        const other = right.get(signature(s.labels));
        if (other !== undefined) samples.push({ labels: dropName(s.labels), value: f(s.value, other) });
      }
      return { kind: 'vector', samples };
    }
  }
}

function aggregate(op: string, xs: number[]): number {
  switch (op) {
    case 'sum':
      return xs.reduce((a, b) => a + b, 0);
    case 'avg':
      return xs.reduce((a, b) => a + b, 0) / xs.length;
    case 'min':
      return Math.min(...xs);
    case 'max':
      return Math.max(...xs);
    default:
      return xs.length;
  }
}

function dropName(labels: Record<string, string>): Record<string, string> {
  const { __name__: _, ...rest } = labels;
  return rest;
}

function signature(labels: Record<string, string>): string {
  return JSON.stringify(Object.entries(dropName(labels)).sort());
}
