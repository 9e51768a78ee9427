import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, inject, it, vi } from 'vitest';
import { EtcdLockService } from '../../src/coordination/etcd-locks.js';
import { InputError } from '../../src/errors.js';
import type { Snapshot } from '../../src/model/snapshot.js';
import { TaskTableUnavailableError } from '../../src/tasks/service.js';
import { TaskFailedError, type TaskHandler, TaskRequestError, TaskWaitError } from '../../src/tasks/types.js';
import { RESUME_REASON } from '../../src/tasks/worker.js';
import { type TaskRig, taskRig, until } from './rig.js';

/** The private etcd of the unit run (test/coordination/etcd-server.ts); null without etcd. */
const etcd = inject('etcd');

const world: Snapshot = {
  format: 'aicerine-snapshot/1',
  takenAt: '2026-11-30T20:00:00Z',
  source: 'tasks-test',
  hosts: [],
  servers: [],
  serverGroups: [],
};

/** Counts to `to`, one checkpoint per step, waiting for `gate` before each step when set. */
interface CountArgs {
  to: number;
  host: string;
  fail?: boolean;
}
const runsOf = new Map<string, number>();
let gate: Promise<void> | null = null;
/** The gate holds steps from this count on. */
let gateFrom = 0;
const count: TaskHandler<CountArgs, { at: number }> = {
  kind: 'count',
  description: 'counts',
  parse(raw) {
    const r = raw as Record<string, unknown>;
    if (typeof r.to !== 'number')
      throw new InputError([{ path: 'to', message: 'expected a number', value: r.to }]);
    return { to: r.to, host: typeof r.host === 'string' ? r.host : 'h1', fail: r.fail === true };
  },
  async preflight(args, ctx) {
    if (args.to < 0) throw new TaskRequestError(409, 'negative');
    const busy = (await ctx.unfinished()).some((t) => t.hosts.includes(args.host) && t.kind === 'count');
    if (busy) throw new TaskRequestError(409, `host ${args.host} already has a count task`);
    return [
      { kind: 'count', args: { ...args }, hosts: [args.host] },
      { kind: 'count-cleanup', args: {}, hosts: [], afterBatch: true },
    ];
  },
  async run(ctx) {
    runsOf.set(ctx.task.id, (runsOf.get(ctx.task.id) ?? 0) + 1);
    let at = ctx.checkpoint.load()?.at ?? 0;
    while (at < ctx.args.to) {
      if (gate && at >= gateFrom) await gate;
      ctx.signal.throwIfAborted();
      at++;
      await ctx.checkpoint.save({ at });
      await ctx.progress({ done: at, total: ctx.args.to, detail: `at ${at}` });
    }
    await ctx.audit.record('counted', `host:${ctx.args.host}`, { to: at });
    if (ctx.args.fail) throw new TaskFailedError('asked to fail', { at });
    return { counted: at };
  },
};
const cleanup: TaskHandler<Record<string, never>, null> = {
  kind: 'count-cleanup',
  description: 'after the counts',
  internal: true,
  parse: () => ({}),
  preflight: async () => [],
  run: async () => 'clean',
};

let r: TaskRig | undefined;
afterEach(async () => {
  gate = null;
  gateFrom = 0;
  runsOf.clear();
  await r?.close();
  r = undefined;
});

const states = async (rig: TaskRig) =>
  (await rig.store.tasks.list()).items.map((t) => [t.kind, t.state]).reverse();

describe('task requests', () => {
  it('refuses unknown or internal kinds and bad arguments with 400, naming the field; writes nothing', async () => {
    r = await taskRig(world, [count, cleanup]);
    await expect(r.service.create('nope', {}, 'alice')).rejects.toMatchObject({ status: 400 });
    await expect(r.service.create('count-cleanup', {}, 'alice')).rejects.toMatchObject({ status: 400 });
    const err = await r.service.create('count', { to: 'x' }, 'alice').catch((e) => e);
    expect(err).toBeInstanceOf(TaskRequestError);
    expect(err.issues).toEqual([{ path: 'args.to', message: 'expected a number', value: 'x' }]);
    await r.service.create('count', { to: 1, host: 'h1' }, 'alice');
    await expect(r.service.create('count', { to: 1, host: 'h1' }, 'bob')).rejects.toMatchObject({
      status: 409,
    });
    expect(await states(r)).toEqual([
      ['count', 'SCHEDULED'],
      ['count-cleanup', 'SCHEDULED'],
    ]);
  });

  it("points a refusal's issues at the request's args, lists each, and leaves configuration issues alone", async () => {
    const picky: TaskHandler<{ hosts: string[] }, null> = {
      kind: 'picky',
      description: 'refuses what it is given',
      parse: (raw) => ({ hosts: (raw as { hosts: string[] }).hosts }),
      async preflight(args) {
        if (args.hosts.length > 1)
          throw new TaskRequestError(404, 'unknown host(s); nothing was created', [
            { path: 'hosts[1]', message: 'no such host', value: args.hosts[1] },
            { path: 'hosts[2]', message: 'no such host', value: args.hosts[2] },
          ]);
        throw new TaskRequestError(409, 'the configuration does not match the cloud', [
          { file: 'the service configuration', path: 'tasks.validation.image', message: 'no such image' },
        ]);
      },
      run: async () => null,
    };
    r = await taskRig(world, [picky]);
    const several = await r.service.create('picky', { hosts: ['a', 'x', 'y'] }, 'alice').catch((e) => e);
    expect(several).toMatchObject({
      status: 404,
      issues: [
        { path: 'args.hosts[1]', value: 'x' },
        { path: 'args.hosts[2]', value: 'y' },
      ],
    });
    expect(several.message).toBe(
      'unknown host(s); nothing was created\nargs.hosts[1]: no such host, got "x"\nargs.hosts[2]: no such host, got "y"',
    );
    const config = await r.service.create('picky', { hosts: ['a'] }, 'alice').catch((e) => e);
    expect(config.issues).toEqual([
      { file: 'the service configuration', path: 'tasks.validation.image', message: 'no such image' },
    ]);
    expect(await states(r)).toEqual([]);
  });

  it('refuses to write anything when the lock backend is unreachable', async () => {
    r = await taskRig(world, [count, cleanup]);
    r.locks.down = 'etcd: connection refused';
    await expect(r.service.create('count', { to: 1 }, 'alice')).rejects.toBeInstanceOf(
      TaskTableUnavailableError,
    );
    expect(await states(r)).toEqual([]);
  });
});

describe('the task worker', () => {
  it('runs a task to DONE with progress, checkpoints and audit; the batch clean-up runs after', async () => {
    r = await taskRig(world, [count, cleanup]);
    const [t] = await r.service.create('count', { to: 3, host: 'h1' }, 'alice');
    const w = r.worker('w1');
    await w.start();
    await until(async () => (await r!.store.tasks.unfinished()).length === 0);
    const done = await r.store.tasks.get(t!.id);
    expect(done).toMatchObject({
      state: 'DONE',
      result: { counted: 3 },
      progress: { done: 3, total: 3, detail: 'done' },
      checkpoint: { at: 3 },
      owner: 'w1',
      attempts: 1,
    });
    expect(done?.endedAt).not.toBeNull();
    expect(await states(r)).toEqual([
      ['count', 'DONE'],
      ['count-cleanup', 'DONE'],
    ]);
    const audit = await r.store.audit.list({ action: 'task.counted' });
    expect(audit.items[0]).toMatchObject({ actor: `task:${t!.id}`, target: 'host:h1' });
    expect(await r.locks.list('host/')).toEqual([]);
  });

  it("claims a task created through its process's task service at once, not at its next poll", async () => {
    r = await taskRig(world, [count, cleanup]);
    const reads = vi.spyOn(r.store.tasks, 'unfinished');
    // A minute between polls: only being woken gets the tasks claimed within the test.
    const w = r.worker('w1', { pollMs: 60_000 });
    await w.start();
    // Its first pass (at start) read the table, empty, holding the table lock: the request's
    // decision comes after it.
    await until(() => reads.mock.calls.length >= 1);
    const [t, clean] = await r.service.create('count', { to: 2, host: 'h1' }, 'alice');
    // The clean-up of the batch waits for the count; the count's end wakes the worker again.
    expect((await r!.ended(clean!.id, 20_000)).state).toBe('DONE');
    expect(await r.store.tasks.get(t!.id)).toMatchObject({ state: 'DONE', owner: 'w1', attempts: 1 });
  });

  it('does not claim again at once a task whose run ended waiting: it waits for a reason to look', async () => {
    let waits = 0;
    const waiting: TaskHandler<Record<string, never>, null> = {
      kind: 'waits',
      description: 'always waits',
      parse: () => ({}),
      preflight: async () => [{ kind: 'waits', args: {}, hosts: [] }],
      async run() {
        waits++;
        throw new TaskWaitError('not yet');
      },
    };
    r = await taskRig(world, [count, cleanup, waiting]);
    const w = r.worker('w1', { pollMs: 60_000 });
    await w.start();
    const [t] = await r.service.create('waits', {}, 'alice');
    await until(async () => (await r!.store.tasks.get(t!.id))?.state === 'WAITING');
    await until(() => w.status().running.length === 0);
    // Woken again by its own end, it would be claimed and run again and again in this time;
    // nothing can make a correct worker look before its poll (a minute away).
    await new Promise((res) => setTimeout(res, 300));
    expect(waits).toBe(1);
    expect((await r.store.tasks.get(t!.id))?.attempts).toBe(1);
    // A new task is a reason to look: the waiting one is tried again in the same pass.
    const [c] = await r.service.create('count', { to: 1, host: 'h1' }, 'alice');
    expect((await r!.ended(c!.id, 20_000)).state).toBe('DONE');
    expect(waits).toBeGreaterThanOrEqual(2);
  });

  it('ends a failing task in ERROR with its message and partial result', async () => {
    r = await taskRig(world, [count, cleanup]);
    const [t] = await r.service.create('count', { to: 2, fail: true }, 'alice');
    await r.worker('w1').start();
    expect((await r!.ended(t!.id)).state).toBe('ERROR');
    expect(await r.store.tasks.get(t!.id)).toMatchObject({ error: 'asked to fail', result: { at: 2 } });
  });

  it('two workers racing for the same task: exactly one runs it', async () => {
    r = await taskRig(world, [count, cleanup]);
    const created = [];
    for (let i = 0; i < 6; i++)
      created.push(...(await r.service.create('count', { to: 2, host: `h${i}` }, 'alice')));
    const a = r.worker('wa');
    const b = r.worker('wb');
    await Promise.all([a.start(), b.start()]);
    await until(async () => (await r!.store.tasks.unfinished()).length === 0);
    for (const t of created.filter((t) => t.kind === 'count')) expect(runsOf.get(t.id)).toBe(1);
    const owners = new Set((await r.store.tasks.list()).items.map((t) => t.owner));
    expect(owners.size).toBeGreaterThanOrEqual(1);
  });

  it('waits, saying why, while a host is held by someone else', async () => {
    r = await taskRig(world, [count, cleanup]);
    const held = await r.locks.tryAcquire('host/h1', 'executor:exec-1');
    const [t] = await r.service.create('count', { to: 1, host: 'h1' }, 'alice');
    const w = r.worker('w1');
    await w.tick();
    expect(await r.store.tasks.get(t!.id)).toMatchObject({
      state: 'WAITING',
      waitingReason: 'host h1 is held by executor:exec-1',
    });
    await held?.release();
    await w.start();
    expect((await r!.ended(t!.id)).state).toBe('DONE');
  });

  it('writes nothing while another holds the table lock; decides once it is free', async () => {
    r = await taskRig(world, [count, cleanup]);
    const [t] = await r.service.create('count', { to: 1 }, 'alice');
    const held = await r.locks.tryAcquire('tasks/table', 'another worker');
    const w = r.worker('w1');
    await w.tick();
    await w.tick();
    expect(await r.store.tasks.get(t!.id)).toEqual(t);
    expect(runsOf.get(t!.id)).toBeUndefined();
    await held?.release();
    await w.tick();
    await w.drain();
    expect(await r.store.tasks.get(t!.id)).toMatchObject({ state: 'DONE', attempts: 1 });
  });

  it('touches nothing while the lock backend is unreachable, and says so', async () => {
    r = await taskRig(world, [count, cleanup]);
    const [t] = await r.service.create('count', { to: 1 }, 'alice');
    const w = r.worker('w1');
    r.locks.down = 'etcd: connection refused';
    await expect(w.start()).rejects.toThrow(/refuses to start.*connection refused/);
    await w.tick();
    expect(w.status().blocked).toMatch(/lock backend is unreachable.*connection refused/);
    expect(await r.store.tasks.get(t!.id)).toEqual(t);
    r.locks.down = null;
    await w.tick();
    expect(w.status().blocked).toBeNull();
    await w.drain();
    expect((await r.store.tasks.get(t!.id))?.state).toBe('DONE');
  });

  it('a stopped worker leaves its task WAITING; a new worker resumes it from the checkpoint', async () => {
    r = await taskRig(world, [count, cleanup]);
    let open!: () => void;
    gate = new Promise((res) => {
      open = res;
    });
    gateFrom = 2;
    const [t] = await r.service.create('count', { to: 4 }, 'alice');
    const w1 = r.worker('w1');
    await w1.start();
    await until(async () => (await r!.store.tasks.get(t!.id))?.progress.done === 2);
    const stopping = w1.stop();
    open();
    await stopping;
    const waiting = await r.store.tasks.get(t!.id);
    expect(waiting).toMatchObject({ state: 'WAITING', waitingReason: RESUME_REASON });
    expect(waiting?.checkpoint).toEqual({ at: 2 });
    gate = null;
    await r.worker('w2').start();
    expect((await r!.ended(t!.id)).state).toBe('DONE');
    expect(await r.store.tasks.get(t!.id)).toMatchObject({
      owner: 'w2',
      attempts: 2,
      result: { counted: 4 },
    });
    expect(runsOf.get(t!.id)).toBe(2);
  });

  it('adopts a RUNNING task whose worker stopped beating, and only then', async () => {
    r = await taskRig(world, [count, cleanup]);
    const [t] = await r.service.create('count', { to: 1 }, 'alice');
    const at = new Date(r.clock.now()).toISOString();
    await r.store.tasks.update(t!.id, t!.version, { state: 'RUNNING', owner: 'dead', heartbeatAt: at }, at);
    const w = r.worker('w1', { staleAfterMs: 60_000 });
    await w.tick();
    expect((await r.store.tasks.get(t!.id))?.owner).toBe('dead');
    r.clock.offsetMs = 61_000;
    await w.tick();
    await w.drain();
    expect(await r.store.tasks.get(t!.id)).toMatchObject({ state: 'DONE', owner: 'w1' });
  });

  it('cancels: a waiting task ends at once, a running one at its next safe point', async () => {
    r = await taskRig(world, [count, cleanup]);
    const [a] = await r.service.create('count', { to: 1, host: 'h1' }, 'alice');
    expect(await r.service.cancel(a!.id, 'bob')).toMatchObject({ state: 'ERROR', error: 'cancelled by bob' });
    await expect(r.service.cancel(a!.id, 'bob')).rejects.toMatchObject({ status: 409 });
    await expect(r.service.cancel('999', 'bob')).rejects.toMatchObject({ status: 404 });
    let open!: () => void;
    gate = new Promise((res) => {
      open = res;
    });
    const [b] = await r.service.create('count', { to: 3, host: 'h2' }, 'alice');
    const w = r.worker('w1');
    await w.start();
    await until(async () => (await r!.store.tasks.get(b!.id))?.state === 'RUNNING');
    expect(await r.service.cancel(b!.id, 'bob')).toMatchObject({ state: 'RUNNING', cancelRequested: true });
    await new Promise((res) => setTimeout(res, 100));
    open();
    expect((await r!.ended(b!.id)).state).toBe('ERROR');
    expect((await r.store.tasks.get(b!.id))?.error).toBe('cancelled');
  });

  it('purges DONE tasks past the retention, under its lock, and never other states', async () => {
    r = await taskRig(world, [count, cleanup]);
    await r.service.create('count', { to: 1, host: 'h1' }, 'alice');
    const [failing] = await r.service.create('count', { to: 1, host: 'h2', fail: true }, 'alice');
    const w = r.worker('w1', { doneRetentionMs: 3_600_000, purgeEveryMs: 0 });
    await w.start();
    await until(async () => (await r!.store.tasks.unfinished()).length === 0);
    await w.stop();
    expect((await r.store.tasks.list()).items).toHaveLength(4);
    // Another worker holds the purge lock: nothing is purged.
    const held = await r.locks.tryAcquire('tasks/purge-done', 'other');
    r.clock.offsetMs = 2 * 3_600_000;
    const w2 = r.worker('w2', { doneRetentionMs: 3_600_000, purgeEveryMs: 0 });
    await w2.tick();
    expect((await r.store.tasks.list()).items).toHaveLength(4);
    await held?.release();
    await w2.tick();
    expect((await r.store.tasks.list()).items.map((t) => [t.id, t.state])).toEqual([[failing!.id, 'ERROR']]);
    expect(await r.service.clean(null)).toBe(0);
  });

  it.skipIf(etcd === null)(
    'purges old DONE tasks one worker at a time on etcd: not while another process holds the purge lock',
    async () => {
      r = await taskRig(world, [count, cleanup]);
      const prefix = `/test-tasks-${randomBytes(4).toString('hex')}/`;
      const clients = [0, 1].map(() => new EtcdLockService({ endpoints: [etcd!.endpoint], prefix }));
      try {
        const [a, b] = clients as [EtcdLockService, EtcdLockService];
        await r.service.create('count', { to: 1, host: 'h1' }, 'alice');
        const w1 = r.worker('w1', { purgeEveryMs: 0 }, a);
        await w1.start();
        await until(async () => (await r!.store.tasks.unfinished()).length === 0);
        await w1.stop();
        expect((await r.store.tasks.list()).items.map((t) => t.state)).toEqual(['DONE', 'DONE']);
        r.clock.offsetMs = 2 * 86_400_000;
        // The other process (its own etcd client) purges now: this one finds the lock taken.
        const held = await b.tryAcquire('tasks/purge-done', 'worker-b');
        expect(held).not.toBeNull();
        const w2 = r.worker('w2', { purgeEveryMs: 0 }, a);
        await w2.tick();
        expect((await r.store.tasks.list()).items).toHaveLength(2);
        await held?.release();
        await w2.tick();
        expect((await r.store.tasks.list()).items).toEqual([]);
      } finally {
        for (const c of clients) await c.close();
      }
    },
  );
});
