// Plan statuses through the running service's API on the simulator (the dashboard tests' rig):
// an assisted plan approved in part runs that part, stays open with the rest undecided and is not
// replaced, and approving the rest runs it and closes it.

import { afterEach, describe, expect, it } from 'vitest';
import { type Rig, startRig, until } from '../web/rig.js';

let r: Rig | undefined;
afterEach(async () => {
  await r?.close();
  r = undefined;
});

interface PlanRow {
  id: string;
  status: string;
  moveCount: number;
}
interface ExecutionRow {
  id: string;
  planId: string;
  state: string;
}

async function call<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
  const res = await fetch(`${r!.url}${path}`, {
    method,
    headers: {
      accept: 'application/json',
      // A body-less action sends the clients' header, as the CLI does.
      ...(body !== undefined ? { 'content-type': 'application/json' } : { 'x-aicerine-client': 'test' }),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

const plans = async () => (await call<{ items: PlanRow[] }>('GET', '/v1/plans?aggregate=gold')).items;
const executions = async (planId: string) =>
  (await call<{ items: ExecutionRow[] }>('GET', '/v1/executions?aggregate=gold')).items.filter(
    (e) => e.planId === planId,
  );
const stepsRun = async (executionIds: string[]) => {
  const steps: number[] = [];
  for (const id of executionIds) {
    const e = await call<{ moves: { step: number; state: string }[] }>('GET', `/v1/executions/${id}`);
    steps.push(...e.moves.map((m) => m.step));
  }
  return steps.sort((a, b) => a - b);
};

describe('plan statuses', () => {
  it('runs the approved moves and keeps the plan open for the rest, then closes it', async () => {
    r = await startRig({ auth: false });
    const plan = await until('a proposed plan for gold', async () =>
      (await plans()).find((p) => p.status === 'proposed' && p.moveCount >= 2),
    );
    const doc = await call<{ plan: { aggregates: { moves: { step: number }[] }[] } }>(
      'GET',
      `/v1/plans/${plan.id}`,
    );
    const steps = doc.plan.aggregates[0]!.moves.map((m) => m.step);
    const first = steps[0]!;
    await call('POST', `/v1/plans/${plan.id}/approve`, { steps: [first], comment: 'one first' });
    const ran = await until('the approved move to run', async () => {
      const ex = await executions(plan.id);
      return ex.length > 0 && ex.every((e) => e.state !== 'running') ? ex : undefined;
    });
    expect(await stepsRun(ran.map((e) => e.id))).toEqual([first]);
    // A few cycles later: the same plan, still open, nothing else run, no newer plan.
    const mark = r.service.cycles.at(-1);
    await until('three more cycles', async () => {
      const seen = r!.service.cycles;
      return seen.length - 1 - seen.lastIndexOf(mark!) >= 3 ? true : undefined;
    });
    const after = await plans();
    expect(after.map((p) => [p.id, p.status])).toEqual([[plan.id, 'partially-approved']]);
    expect(await executions(plan.id)).toHaveLength(ran.length);
    // The rest approved: it runs, and the plan closes.
    await call('POST', `/v1/plans/${plan.id}/approve`, { comment: 'the rest' });
    await until('the plan to close', async () =>
      (await plans()).find((p) => p.id === plan.id && p.status === 'executed'),
    );
    const all = await until('every execution of the plan to end', async () => {
      const ex = await executions(plan.id);
      return ex.every((e) => e.state !== 'running') ? ex : undefined;
    });
    expect(await stepsRun(all.map((e) => e.id))).toEqual(steps);
  }, 180_000);
});
