// The plan's own bookkeeping, which the replay relies on: steps numbered 1..n within each aggregate,
// waves numbered from 1 and never going back as steps go forward, a server in flight at most once per
// wave, dependencies pointing at earlier waves, and each aggregate listed once.
import type { AggregatePlan, Move } from '../../model/plan.js';
import { executionOrder, type PlanChecker, type Report } from '../replay.js';

const isCount = (n: number): boolean => Number.isInteger(n) && n >= 1;

function checkSteps(aggregate: AggregatePlan, report: Report): void {
  const name = aggregate.name;
  const seen = new Map<number, number>();
  for (const move of aggregate.moves) {
    if (!isCount(move.step)) {
      report({
        code: 'steps-not-ordered',
        aggregate: name,
        step: move.step,
        server: move.server,
        detail: `step ${move.step} is not a positive integer`,
      });
    }
    seen.set(move.step, (seen.get(move.step) ?? 0) + 1);
  }
  for (const [step, count] of seen) {
    if (count > 1)
      report({
        code: 'steps-not-ordered',
        aggregate: name,
        step,
        detail: `step ${step} is used by ${count} moves`,
      });
  }
  const missing: number[] = [];
  for (let step = 1; step <= aggregate.moves.length; step++) if (!seen.has(step)) missing.push(step);
  if (missing.length > 0) {
    report({
      code: 'steps-not-ordered',
      aggregate: name,
      detail: `${aggregate.moves.length} moves but step${missing.length > 1 ? 's' : ''} ${missing.join(', ')} missing (steps must be 1..${aggregate.moves.length})`,
    });
  }
  const outOfOrder = aggregate.moves.findIndex(
    (m, i) => i > 0 && m.step < (aggregate.moves[i - 1]?.step ?? 0),
  );
  if (outOfOrder > 0) {
    report({
      code: 'steps-not-ordered',
      aggregate: name,
      step: aggregate.moves[outOfOrder]?.step,
      detail: `moves are not listed in step order: step ${aggregate.moves[outOfOrder]?.step} comes after step ${aggregate.moves[outOfOrder - 1]?.step}`,
    });
  }
}

function checkWaves(aggregate: AggregatePlan, ordered: readonly Move[], report: Report): void {
  const name = aggregate.name;
  let previous: Move | undefined;
  for (const move of ordered) {
    const at = { aggregate: name, step: move.step, wave: move.wave, server: move.server };
    if (!isCount(move.wave)) {
      report({ ...at, code: 'wave-order', detail: `wave ${move.wave} is not a positive integer` });
    } else if (previous === undefined && move.wave !== 1) {
      report({
        ...at,
        code: 'wave-order',
        detail: `first step ${move.step} is in wave ${move.wave}; waves start at 1`,
      });
    } else if (previous !== undefined && move.wave < previous.wave) {
      report({
        ...at,
        code: 'wave-order',
        detail: `step ${move.step} is in wave ${move.wave}, after step ${previous.step} in wave ${previous.wave}`,
      });
    } else if (previous !== undefined && move.wave > previous.wave + 1) {
      report({
        ...at,
        code: 'wave-order',
        detail: `waves jump from ${previous.wave} (step ${previous.step}) to ${move.wave} (step ${move.step})`,
      });
    }
    previous = move;
  }
}

function checkOncePerWave(aggregate: AggregatePlan, ordered: readonly Move[], report: Report): void {
  const steps = new Map<string, number[]>();
  for (const move of ordered) {
    const key = `${move.wave}\u0000${move.server}`;
    steps.set(key, [...(steps.get(key) ?? []), move.step]);
  }
  for (const [key, list] of steps) {
    if (list.length < 2) continue;
    const [wave, server] = key.split('\u0000');
    report({
      code: 'moved-twice-in-wave',
      aggregate: aggregate.name,
      wave: Number(wave),
      step: list[1],
      server,
      detail: `server ${server} moves ${list.length} times in wave ${wave} (steps ${list.join(', ')})`,
    });
  }
}

function dependencyProblem(
  dep: unknown,
  move: Move,
  waveOfStep: ReadonlyMap<number, number>,
): string | undefined {
  const depWave = typeof dep === 'number' ? waveOfStep.get(dep) : undefined;
  if (typeof dep !== 'number' || depWave === undefined) return `there is no step ${JSON.stringify(dep)}`;
  if (dep >= move.step) return `step ${dep} is not earlier`;
  if (depWave >= move.wave)
    return `step ${dep} is in wave ${depWave}, not an earlier wave, so both would be in flight together`;
  return undefined;
}

function checkDependencies(aggregate: AggregatePlan, report: Report): void {
  const waveOfStep = new Map(aggregate.moves.map((m) => [m.step, m.wave] as const));
  for (const move of aggregate.moves) {
    const flag = (detail: string): void =>
      report({
        code: 'bad-dependency',
        aggregate: aggregate.name,
        step: move.step,
        wave: move.wave,
        server: move.server,
        detail,
      });
    // `after` is optional and not checked by the plan schema, so a hand-edited plan may carry anything.
    const after: unknown = move.after ?? [];
    if (!Array.isArray(after)) {
      flag(`step ${move.step}: "after" must be a list of step numbers, got ${JSON.stringify(after)}`);
      continue;
    }
    for (const dep of after as unknown[]) {
      const problem = dependencyProblem(dep, move, waveOfStep);
      if (problem !== undefined) {
        flag(`step ${move.step} (wave ${move.wave}) waits for step ${JSON.stringify(dep)}, but ${problem}`);
      }
    }
  }
}

export function sequenceChecker(): PlanChecker {
  return {
    constraint: 'sequence',
    startsWith(ctx): void {
      const names = new Map<string, number>();
      for (const a of ctx.plan.aggregates) names.set(a.name, (names.get(a.name) ?? 0) + 1);
      for (const [name, count] of names) {
        if (count > 1) {
          ctx.report({
            code: 'duplicate-aggregate',
            aggregate: name,
            detail: `aggregate ${name} is listed ${count} times`,
          });
        }
      }
      for (const aggregate of ctx.plan.aggregates) {
        const ordered = executionOrder(aggregate);
        checkSteps(aggregate, ctx.report);
        checkWaves(aggregate, ordered, ctx.report);
        checkOncePerWave(aggregate, ordered, ctx.report);
        checkDependencies(aggregate, ctx.report);
      }
    },
  };
}
