// The top-level operator commands (show-plan, approve, reject, abort, what-if) and
// snapshots, against the API with Keystone tokens from OS_* as every other command gets them.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listenApi } from '../../../src/api/server.js';
import { COMMANDS } from '../../../src/cli/command-list.js';
import { register as registerAbort } from '../../../src/cli/commands/abort.js';
import { register as registerApprove } from '../../../src/cli/commands/approve.js';
import { register as registerReject } from '../../../src/cli/commands/reject.js';
import { register as registerShowPlan } from '../../../src/cli/commands/show-plan.js';
import { register as registerSnapshots } from '../../../src/cli/commands/snapshots.js';
import { register as registerWhatIf } from '../../../src/cli/commands/what-if.js';
import { parseSnapshot } from '../../../src/formats/snapshot-file.js';
import { type Harness, NOW, seedPlan, simKeystone, startApi } from '../../api/harness.js';
import { runCommand } from '../../fixtures/cli.js';

const registers = [
  registerShowPlan,
  registerApprove,
  registerReject,
  registerAbort,
  registerWhatIf,
  registerSnapshots,
];
let ks: Awaited<ReturnType<typeof simKeystone>>;
let h: Harness;
let url: string;
let dir: string;
const saved = { ...process.env };

beforeAll(async () => {
  ks = await simKeystone();
  h = await startApi({ kind: 'keystone', validator: ks.validator });
  url = await listenApi(h.app, { host: '127.0.0.1', port: 0, noAuth: false });
  dir = await mkdtemp(join(tmpdir(), 'aic-cli-'));
  Object.assign(process.env, {
    OS_CLOUD: '',
    OS_AUTH_URL: ks.sim.authUrl,
    OS_USERNAME: 'admin',
    OS_PASSWORD: 'pw',
    OS_PROJECT_NAME: 'admin',
    OS_USER_DOMAIN_NAME: 'Default',
    OS_PROJECT_DOMAIN_NAME: 'Default',
  });
  await seedPlan(h.store, 'gold', 3);
  await h.store.createExecution(
    { id: 'e1', aggregate: 'gold', planId: '1', startedAt: NOW.toISOString(), startedBy: 'loop:active' },
    [{ step: 1, wave: 1, serverId: 's1', from: 'c1', to: 'c2', estimatedSeconds: 30 }],
  );
});
afterAll(async () => {
  process.env = saved;
  await h.close();
  await ks.sim.close();
  await rm(dir, { recursive: true, force: true });
});

const run = (...args: string[]) => runCommand(registers, [...args, '--api', url]);

describe('top-level operator commands', () => {
  it('every one is in the command list, with its description', () => {
    for (const name of ['show-plan', 'approve', 'reject', 'abort', 'what-if', 'snapshots'])
      expect(COMMANDS.find((c) => c.name === name)?.description, name).toMatch(/\w{4,}/);
  });

  it('show-plan, approve and reject, as plans show/approve/reject', async () => {
    expect((await run('approve', '1', '--steps', '1', '--comment', 'ok')).out).toBe(
      'plan 1: partially-approved\n',
    );
    expect((await run('reject', '1', '--steps', '2,3')).out).toBe('plan 1: partially-approved\n');
    const shown = (await run('show-plan', '1')).out;
    expect(shown).toContain('plan 1: gold (assisted), partially-approved, 3 moves');
    expect(shown).toContain('[approved by operator:admin: ok]');
    expect(JSON.parse((await run('show-plan', '1', '--json')).out).decisions).toHaveLength(3);
  });

  it('abort, and --wait until it ended', async () => {
    expect((await run('abort', 'e1', '--wait')).out).toBe(
      'execution e1: aborted; 0 completed, 0 aborted or failed, 1 skipped\n',
    );
    await expect(run('abort', 'e1')).rejects.toThrow(/409 execution e1 is aborted, not running/);
  });

  it('what-if: the plan and a table of hosts before and after; nothing stored', async () => {
    const out = (await run('what-if', 'gold', '--drain', 'g1', '--add-like', 'g3', '--add-count', '1')).out;
    expect(out).toMatch(
      /^what-if on gold \(snapshot of 2026-11-30T11:58:00.000Z\): drain g1; add g3-whatif-1; nothing is stored or executed/,
    );
    expect(out).toMatch(/HOST\s+SERVERS\s+CPU BEFORE\s+AFTER\s+MEMORY BEFORE\s+AFTER/);
    expect(out).toMatch(/g1\s+6 -> 0\s+56\.3%\s+0\.0%/);
    const json = JSON.parse((await run('what-if', 'gold', '--json')).out);
    expect(json.plan.format).toBe('aicerine-plan/1');
    const policy = join(dir, 'p.yaml');
    await import('node:fs/promises').then((fs) => fs.writeFile(policy, 'mode: zigzag\n'));
    await expect(run('what-if', 'gold', '--policy', policy)).rejects.toThrow(/400 body\.policy\.mode/);
    await expect(run('what-if', 'gold', '--drain', 'g1,,g2')).rejects.toThrow(/--drain: expected host names/);
    // A count without the host to copy was silently ignored; it is refused, naming what is missing.
    await expect(run('what-if', 'gold', '--add-count', '2')).rejects.toThrow(
      /--add-count: needs --add-like HOST/,
    );
    expect((await h.store.plans.list()).items).toHaveLength(1);
  });

  it('snapshots: record now, list, download', async () => {
    const made = (await run('snapshots', 'record', '--comment', 'before upgrade')).out;
    const id = /^snapshot (\d+): taken /.exec(made)?.[1];
    expect(id, made).toBeDefined();
    expect((await run('snapshots', 'list')).out).toMatch(
      new RegExp(`^ID\\s+TAKEN\\s+SIZE\\s+RECORDED\\n${id}\\s+`),
    );
    const file = join(dir, 'snap.json.gz');
    expect((await run('snapshots', 'download', id!, '-o', file)).out).toMatch(/written to .*snap\.json\.gz/);
    const doc = parseSnapshot(JSON.parse(gunzipSync(await readFile(file)).toString('utf8')));
    expect(doc.hosts).toHaveLength(5);
    await expect(run('snapshots', 'download', '999', '-o', join(dir, 'x.json'))).rejects.toThrow(
      /404 snapshot 999 not found/,
    );
  });
});
