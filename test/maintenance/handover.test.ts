// The hand-over's delivery (src/maintenance/handover.ts) against the receiver example
// (examples/handover-receiver.mjs, in its own process): each channel's answer is recorded as it
// comes and never sent again once acknowledged; a crash between a delivery and the write of its
// answer sends it again with the same id, and the receiver acts once. "The store" here is the
// record callback the driver gives (it writes the host's `handover` in the campaign row); a
// crash is that write never happening: the callback throws, and nothing later is recorded.
import { existsSync, mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  acknowledged,
  type HandoverChannel,
  type HandoverEvent,
  type HandoverOutcome,
  handOver,
  handoverId,
} from '../../src/maintenance/handover.js';
import { type Receiver, startReceiver } from './receiver.js';

const dir = mkdtempSync(join(tmpdir(), 'aicerine-handover-'));
let receiver: Receiver;
beforeAll(async () => {
  receiver = await startReceiver(dir);
});
afterAll(async () => {
  await receiver.close();
  rmSync(dir, { recursive: true, force: true });
});

const COMMAND = ['/bin/sh', '-c', 'echo "$AICERINE_HANDOVER_ID" >> "$0/commands"', dir];

function event(host: string): HandoverEvent {
  return {
    event: 'aicerine.maintenance.ready',
    id: handoverId('7', host),
    campaign: '7',
    aggregate: 'rack',
    host,
    at: new Date().toISOString(),
    returnWhen: 'done',
    doneCommand: `aicerine maintenance done ${host}`,
  };
}

/** The host's recorded answers, and a process that may die before writing one. */
function recorder() {
  const state = {
    recorded: { webhook: null, command: null } as HandoverOutcome,
    dead: false,
    /** Dies instead of writing this channel's answer. */
    dieOn: null as HandoverChannel | null,
    waiters: [] as (() => void)[],
  };
  const record = async (channel: HandoverChannel, answer: string) => {
    if (channel === state.dieOn) state.dead = true;
    if (state.dead) throw new Error(`killed before the ${channel} answer was written`);
    state.recorded = { ...state.recorded, [channel]: answer };
    for (const w of state.waiters.splice(0)) w();
  };
  const recordedWhen = (ok: (r: HandoverOutcome) => boolean) =>
    new Promise<void>((resolve) => {
      const check = () => (ok(state.recorded) ? resolve() : state.waiters.push(check));
      check();
    });
  return { state, record, recordedWhen };
}

const commandRuns = () => {
  const f = join(dir, 'commands');
  return existsSync(f) ? readFileSync(f, 'utf8').split('\n').filter(Boolean) : [];
};

/**
 * Proves no delivery is on its way: a delivery of another id is answered, and the receiver logs
 * deliveries in order, so one sent before it would come first.
 */
async function nothingMoreThan(count: number): Promise<void> {
  const probe = event(`probe-${count}`);
  const res = await fetch(receiver.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'idempotency-key': probe.id },
    body: JSON.stringify(probe),
  });
  expect(res.status).toBe(200);
  const all = await receiver.delivered(count + 1);
  expect(all[count]?.id).toBe(probe.id);
}

describe('hand-over delivery', () => {
  it('sends again a delivery whose answer a crash kept from being written, with the same id; the receiver acts once; never after an acknowledgement', async () => {
    const settings = { webhook: receiver.url, command: null };
    const ev = event('c1');
    // The receiver serves the whole file: what the other tests sent before this one comes first.
    const before = receiver.deliveries().length;
    const r = recorder();
    r.state.dieOn = 'webhook';
    // The first run: the receiver got it and acted, the process died before writing the answer.
    await expect(handOver(settings, ev, r.state.recorded, r.record)).rejects.toThrow(/killed before/);
    const first = (await receiver.delivered(before + 1)).slice(before);
    expect(first).toEqual([{ id: 'maintenance-7-c1', verdict: 'new', host: 'c1' }]);
    expect(r.state.recorded.webhook).toBeNull();

    // The resumed run sends it again: same id, the receiver answers without acting.
    r.state.dead = false;
    r.state.dieOn = null;
    const again = await handOver(settings, ev, r.state.recorded, r.record);
    expect(again).toEqual({ webhook: 'HTTP 200', command: null });
    expect(r.state.recorded.webhook).toBe('HTTP 200');
    expect(acknowledged(r.state.recorded.webhook)).toBe(true);
    const second = await receiver.delivered(before + 2);
    expect(second[before + 1]).toEqual({ id: 'maintenance-7-c1', verdict: 'duplicate', host: 'c1' });
    expect(receiver.actions().filter((h) => h === 'c1')).toEqual(['c1']);

    // A crash after that answer was written (before the host was marked handed over): the next
    // run sends nothing and returns what was recorded.
    expect(await handOver(settings, ev, r.state.recorded, r.record)).toEqual({
      webhook: 'HTTP 200',
      command: null,
    });
    await nothingMoreThan(before + 2);
  });

  it('records each channel’s answer as it comes: a crash while the webhook is out re-runs only the webhook, not the acknowledged command', async () => {
    const settings = { webhook: receiver.url, command: COMMAND };
    const ev = event('c2');
    const before = receiver.deliveries().length;
    const r = recorder();
    // The receiver's action for c2 waits: the command answers first, and its answer is written.
    writeFileSync(join(dir, 'hold-c2'), '');
    const run = handOver(settings, ev, r.state.recorded, r.record);
    const outcome = run.then(
      () => 'finished',
      (e: Error) => e.message,
    );
    await r.recordedWhen((x) => x.command !== null);
    expect(r.state.recorded.command).toBe('exit 0');
    // The process dies now, with the webhook still out.
    r.state.dead = true;
    unlinkSync(join(dir, 'hold-c2'));
    expect(await outcome).toMatch(/killed before the webhook answer was written/);
    await receiver.delivered(before + 1);

    r.state.dead = false;
    const again = await handOver(settings, ev, r.state.recorded, r.record);
    expect(again).toEqual({ webhook: 'HTTP 200', command: 'exit 0' });
    expect(commandRuns().filter((id) => id === ev.id)).toHaveLength(1);
    const mine = (await receiver.delivered(before + 2)).filter((d) => d.id === ev.id);
    expect(mine.map((d) => d.verdict)).toEqual(['new', 'duplicate']);
    expect(receiver.actions().filter((h) => h === 'c2')).toEqual(['c2']);
  });

  it('sends again a channel whose answer was a failure; the receiver refuses a key that is not the id', async () => {
    const settings = { webhook: receiver.url, command: null };
    const ev = event('c3');
    const r = recorder();
    writeFileSync(join(dir, 'fail-c3'), '');
    const failed = await handOver(settings, ev, r.state.recorded, r.record);
    expect(failed.webhook).toMatch(
      /^failed: HTTP 500: .*the action for maintenance-7-c3 failed.*no such host/,
    );
    expect(acknowledged(failed.webhook)).toBe(false);
    unlinkSync(join(dir, 'fail-c3'));
    const before = receiver.deliveries().length;
    expect(await handOver(settings, ev, r.state.recorded, r.record)).toEqual({
      webhook: 'HTTP 200',
      command: null,
    });
    expect((await receiver.delivered(before + 1)).at(-1)).toEqual({
      id: ev.id,
      verdict: 'new',
      host: 'c3',
    });
    expect(receiver.actions().filter((h) => h === 'c3')).toEqual(['c3', 'c3']);

    const res = await fetch(receiver.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': 'maintenance-7-other' },
      body: JSON.stringify(ev),
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      error: 'Idempotency-Key "maintenance-7-other" differs from the body\'s id "maintenance-7-c3"',
    });
  });
});
