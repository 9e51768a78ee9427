// A standing fuzz suite: snapshots, plans and policies mutated a few thousand times and fed to the
// real loaders, the planner, the checker and the CLI commands (in-process). Whatever the input:
// no crash (only InputError escapes), no stack trace in what the operator reads, every refusal
// names the file and says where, and a refused command writes nothing.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { checkPlan } from '../../src/checker/index.js';
import { register as registerCheckPlan } from '../../src/cli/commands/check-plan.js';
import { register as registerPlan } from '../../src/cli/commands/plan.js';
import { InputError } from '../../src/errors.js';
import { parsePlan } from '../../src/formats/plan-file.js';
import { parseSnapshot } from '../../src/formats/snapshot-file.js';
import { planSnapshot } from '../../src/planner/index.js';
import { DEFAULT_POLICY } from '../../src/policy/defaults.js';
import { compilePolicy } from '../../src/policy/load.js';
import { synthesizeSnapshot } from '../../src/snapshot/synth.js';
import { runCommand } from '../fixtures/cli.js';

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

const SNAPSHOT = JSON.parse(
  JSON.stringify(
    synthesizeSnapshot({ hosts: 8, servers: 60, groups: 6, seed: 4, aggregates: 2, disabled: 1 }),
  ),
) as Json;
const PLAN = JSON.parse(
  JSON.stringify(planSnapshot(parseSnapshot(SNAPSHOT), { ...structuredClone(DEFAULT_POLICY), minGain: 0 })),
) as Json;
const POLICY: Json = {
  mode: 'spread',
  aggregates: ['agg-1'],
  dimensions: [
    { name: 'cpu', weight: 0.5 },
    { name: 'memory', weight: 0.5 },
  ],
  budget: { maxMoves: 20 },
  concurrency: { perHostOutgoing: 1, global: 4 },
  spread: { targetImbalance: 0.01 },
  pack: { spareHosts: 1, maxFill: 0.9 },
  minGain: 0.001,
  costModel: { bandwidthMBps: 500, learned: { intercept: 3, secondsPerGiB: 2 } },
};

/** Every path into a JSON document, root included. */
function paths(
  doc: Json,
  prefix: (string | number)[] = [],
  out: (string | number)[][] = [],
): (string | number)[][] {
  out.push(prefix);
  if (Array.isArray(doc))
    doc.forEach((v, i) => {
      paths(v, [...prefix, i], out);
    });
  else if (doc !== null && typeof doc === 'object')
    for (const [k, v] of Object.entries(doc)) paths(v, [...prefix, k], out);
  return out;
}

const odd: fc.Arbitrary<Json> = fc.oneof(
  fc.constantFrom<Json>(
    null,
    true,
    0,
    -1,
    0.5,
    1e9,
    -1e300,
    Number.MAX_SAFE_INTEGER + 2,
    '',
    ' ',
    '-1',
    '1e3',
    'agg-9',
    '_unassigned_',
    '1970-01-01T00:00:00Z',
    'not a date',
    '\u0000',
    'x'.repeat(300),
    [],
    {},
    [null],
    { format: 'aicerine-plan/1' },
    { __proto__: 1 } as unknown as Json,
  ),
  fc.jsonValue({ maxDepth: 2 }) as fc.Arbitrary<Json>,
);

type Mutation =
  | { kind: 'set'; at: number; value: Json }
  | { kind: 'delete'; at: number }
  | { kind: 'extra'; at: number; key: string; value: Json }
  | { kind: 'copy'; at: number; to: number };

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constant('set' as const), at: fc.nat(), value: odd }),
  fc.record({ kind: fc.constant('delete' as const), at: fc.nat() }),
  fc.record({
    kind: fc.constant('extra' as const),
    at: fc.nat(),
    key: fc.constantFrom('x', 'name', 'host', 'step', '0'),
    value: odd,
  }),
  fc.record({ kind: fc.constant('copy' as const), at: fc.nat(), to: fc.nat() }),
);

function get(doc: Json, path: (string | number)[]): Json {
  let cur: Json = doc;
  for (const k of path) cur = (cur as Record<string | number, Json>)[k] as Json;
  return cur;
}

function mutate(base: Json, ms: Mutation[]): Json {
  let doc = structuredClone(base);
  for (const m of ms) {
    const all = paths(doc);
    const path = all[m.at % all.length]!;
    const parent = path.length === 0 ? undefined : get(doc, path.slice(0, -1));
    const key = path[path.length - 1];
    if (m.kind === 'set') {
      if (parent === undefined) doc = structuredClone(m.value);
      else (parent as Record<string | number, Json>)[key!] = structuredClone(m.value);
    } else if (m.kind === 'delete') {
      if (Array.isArray(parent)) parent.splice(key as number, 1);
      else if (parent !== undefined && parent !== null && typeof parent === 'object')
        delete parent[key as string];
    } else if (m.kind === 'extra') {
      const target = get(doc, path);
      if (Array.isArray(target)) target.push(structuredClone(m.value));
      else if (target !== null && typeof target === 'object') target[m.key] = structuredClone(m.value);
    } else {
      const from = get(doc, path);
      const to = all[m.to % all.length]!;
      const toParent = to.length === 0 ? undefined : get(doc, to.slice(0, -1));
      if (toParent !== undefined && toParent !== null && typeof toParent === 'object')
        (toParent as Record<string | number, Json>)[to[to.length - 1]!] = structuredClone(from);
    }
  }
  return doc;
}

/** A refusal must be an InputError naming the file on every line, without a stack trace. */
function expectRefusal(err: unknown, file: string): void {
  if (!(err instanceof InputError)) throw err;
  expect(err.issues.length).toBeGreaterThan(0);
  for (const issue of err.issues) expect(issue.file).toBe(file);
  for (const line of err.message.split('\n')) {
    if (line.startsWith('... and ')) continue;
    expect(line.startsWith(`${file}: `), line).toBe(true);
  }
  expect(err.message).not.toMatch(/\n\s+at /);
}

const mutations = fc.array(mutation, { minLength: 1, maxLength: 4 });

interface Written {
  kind: 'same' | 'json' | 'cut' | 'bytes';
  ms?: Mutation[];
  at?: number;
  bytes?: Uint8Array;
}

/** Both outcomes must occur, or the suite would only be testing one of them. */
function expectBoth(counts: { accepted: number; refused: number }): void {
  expect(counts.accepted).toBeGreaterThan(20);
  expect(counts.refused).toBeGreaterThan(20);
}

describe('fuzz: mutated documents through the loaders, planner and checker', () => {
  it('snapshots: refused with the file and a path, or planned and checked without a crash', () => {
    const policy = structuredClone(DEFAULT_POLICY);
    const counts = { accepted: 0, refused: 0 };
    fc.assert(
      fc.property(mutations, (ms) => {
        const doc = mutate(SNAPSHOT, ms);
        let snap: ReturnType<typeof parseSnapshot>;
        try {
          snap = parseSnapshot(doc, 's.json');
        } catch (err) {
          expectRefusal(err, 's.json');
          counts.refused++;
          return;
        }
        counts.accepted++;
        let plan: ReturnType<typeof planSnapshot>;
        try {
          plan = planSnapshot(snap, policy);
        } catch (err) {
          // The planner refuses only a selection it cannot plan (aggregates sharing a host).
          if (!(err instanceof InputError)) throw err;
          return;
        }
        expect(checkPlan(snap, plan).violations).toEqual([]);
      }),
      { numRuns: 700, seed: 1 },
    );
    expectBoth(counts);
  });

  it('plans: refused with the file and a path, or checked without a crash', () => {
    const snap = parseSnapshot(SNAPSHOT);
    const counts = { accepted: 0, refused: 0 };
    fc.assert(
      fc.property(mutations, (ms) => {
        const doc = mutate(PLAN, ms);
        let plan: ReturnType<typeof parsePlan>;
        try {
          plan = parsePlan(doc, 'p.json');
        } catch (err) {
          expectRefusal(err, 'p.json');
          counts.refused++;
          return;
        }
        counts.accepted++;
        const result = checkPlan(snap, plan);
        expect(result.ok).toBe(result.violations.length === 0);
      }),
      { numRuns: 1200, seed: 2 },
    );
    expectBoth(counts);
  });

  it('policies: refused with the file and a path, or planned without a crash', () => {
    const snap = parseSnapshot(SNAPSHOT);
    const counts = { accepted: 0, refused: 0 };
    fc.assert(
      fc.property(mutations, (ms) => {
        const doc = mutate(POLICY, ms);
        let policy: ReturnType<typeof compilePolicy>;
        try {
          policy = compilePolicy(doc, 'p.yaml');
        } catch (err) {
          expectRefusal(err, 'p.yaml');
          counts.refused++;
          return;
        }
        counts.accepted++;
        try {
          const plan = planSnapshot(snap, policy);
          const vs = checkPlan(snap, plan, { dimensions: policy.dimensions }).violations;
          expect(vs).toEqual([]);
        } catch (err) {
          // An aggregate the snapshot lacks is refused naming the policy key.
          if (!(err instanceof InputError)) throw err;
          expect(err.issues.every((i) => i.path.startsWith('aggregates'))).toBe(true);
        }
      }),
      { numRuns: 1000, seed: 3 },
    );
    expectBoth(counts);
  });
});

describe('fuzz: the plan and check-plan commands on mutated files', () => {
  const dir = mkdtempSync(join(tmpdir(), 'aicerine-fuzz-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  afterEach(() => {
    vi.restoreAllMocks();
    process.exitCode = undefined;
  });

  const text = fc.oneof(
    { arbitrary: fc.constant({ kind: 'same' as const }), weight: 2 },
    mutations.map((ms) => ({ kind: 'json' as const, ms })),
    fc.record({ kind: fc.constant('cut' as const), at: fc.double({ min: 0, max: 1, noNaN: true }) }),
    fc.record({ kind: fc.constant('bytes' as const), bytes: fc.uint8Array({ minLength: 1, maxLength: 40 }) }),
  );

  function write(file: string, base: Json, t: Written): void {
    const whole = JSON.stringify(base);
    if (t.kind === 'same') writeFileSync(file, whole);
    else if (t.kind === 'json') writeFileSync(file, JSON.stringify(mutate(base, t.ms!)));
    else if (t.kind === 'cut') writeFileSync(file, whole.slice(0, Math.floor(whole.length * t.at!)));
    else writeFileSync(file, Buffer.from(t.bytes!));
  }

  it('refuse in words and write nothing, or succeed', async () => {
    let n = 0;
    const counts = { accepted: 0, refused: 0 };
    await fc.assert(
      fc.asyncProperty(
        text,
        text,
        text,
        fc.constantFrom('plan', 'check-plan'),
        async (ts, tp, tq, command) => {
          n++;
          const snapFile = join(dir, `s${n}.json`);
          const planFile = join(dir, `p${n}.json`);
          const out = join(dir, `out${n}.json`);
          write(snapFile, SNAPSHOT, ts);
          write(planFile, PLAN, tp);
          const policyFile = join(dir, `q${n}.yaml`);
          write(policyFile, POLICY, tq);
          const args =
            command === 'plan'
              ? ['plan', '--snapshot', snapFile, '--policy', policyFile, '--json', '-o', out]
              : ['check-plan', '--snapshot', snapFile, '--plan', planFile, '--allow-other-snapshot'];
          try {
            const r = await runCommand([registerPlan, registerCheckPlan], args);
            expect(r.err).not.toMatch(/\n\s+at /);
            counts.accepted++;
          } catch (err) {
            if (!(err instanceof InputError)) throw err;
            const files = new Set(err.issues.map((i) => i.file));
            for (const f of files) expect([snapFile, planFile, policyFile]).toContain(f);
            expect(err.message).not.toMatch(/\n\s+at /);
            expect(existsSync(out)).toBe(false);
            // A binary file is refused in words, not by echoing its bytes.
            // biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
            expect(err.message).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\ufffd]/);
            counts.refused++;
          }
        },
      ),
      { numRuns: 300, seed: 4 },
    );
    expectBoth(counts);
  });
});
