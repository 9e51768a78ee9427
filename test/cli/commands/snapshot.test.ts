import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { register } from '../../../src/cli/commands/snapshot.js';
import { encodeJson } from '../../../src/formats/json-file.js';
import { readSnapshot } from '../../../src/formats/snapshot-file.js';
import { synthesizeSnapshot } from '../../../src/snapshot/synth.js';
import { runCommand } from '../../fixtures/cli.js';

const ROOT = resolve(import.meta.dirname, '../../..');
const SAMPLE = join(ROOT, 'data/bitbrains-sample/hourly-sample.csv.gz');
const VMR2L = resolve(ROOT, '../shared/traces/vmr2l-bytedance/json_stream_c1_2022-03-28+32c.json');

// A folder per test: one test's output file must not be another's "nothing was written".
let dir = '';
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'aicerine-snapshot-cli-'));
});
afterEach(async () => {
  vi.restoreAllMocks();
  await rm(dir, { recursive: true, force: true });
});

async function run(...args: string[]): Promise<{ out: string; err: string }> {
  const { out, err } = await runCommand([register], ['snapshot', ...args]);
  return { out, err };
}

describe('aicerine snapshot synth', () => {
  it('writes the same bytes as synthesizeSnapshot, gzipped when asked', async () => {
    const file = join(dir, 'synth.json.gz');
    const { out } = await run(
      'synth',
      ...[
        '--hosts',
        '12',
        '--servers',
        '200',
        '--groups',
        '6',
        '--seed',
        '3',
        '--aggregates',
        '2',
        '--disabled',
        '1',
      ],
      ...['-o', file],
    );
    expect(out).toBe(`wrote ${file}: 12 hosts, 200 servers, 6 server groups\n`);
    const expected = synthesizeSnapshot({
      hosts: 12,
      servers: 200,
      groups: 6,
      seed: 3,
      aggregates: 2,
      disabled: 1,
    });
    expect((await readFile(file)).equals(encodeJson(file, expected))).toBe(true);
    expect((await readSnapshot(file)).hosts).toHaveLength(12);
  });

  it.each([
    [['--hosts', '0'], '--hosts: expected an integer from 1 to 20000, got "0"'],
    [['--hosts', '100000000'], '--hosts: expected an integer from 1 to 20000, got "100000000"'],
    [['--hosts', '0x10'], '--hosts: expected an integer from 1 to 20000, got "0x10"'],
    [['--servers', '-5'], '--servers: expected an integer from 0 to 250000, got "-5"'],
    [['--servers', '1e9'], '--servers: expected an integer from 0 to 250000, got "1e9"'],
    [['--seed', '2.5'], '--seed: expected an integer from 0 to 4294967295, got "2.5"'],
    [['--seed', '4294967296'], '--seed: expected an integer from 0 to 4294967295, got "4294967296"'],
    [
      ['--disabled', '12'],
      '--disabled: synthetic snapshot: disabled must be an integer 0..hosts-1 (11), got 12',
    ],
    [
      ['--groups', '101'],
      '--groups: synthetic snapshot: 101 groups of at least 2 servers need at least 202 servers',
    ],
  ])('refuses %j', async (bad, message) => {
    const flags: Record<string, string> = {
      '--hosts': '12',
      '--servers': '200',
      '--groups': '6',
      '--seed': '3',
    };
    for (let i = 0; i < bad.length; i += 2) flags[bad[i] as string] = bad[i + 1] as string;
    const file = join(dir, 'refused.json');
    await expect(run('synth', ...Object.entries(flags).flat(), '-o', file)).rejects.toThrow(message);
    expect(existsSync(file)).toBe(false);
  });
});

describe('numeric options', () => {
  it('accept JSON number notation (1e3 is 1000), as a policy file does', async () => {
    const file = join(dir, 'e-notation.json');
    const { out } = await run(
      'synth',
      '--hosts',
      '1e1',
      '--servers',
      '2e2',
      '--groups',
      '0',
      '--seed',
      '1',
      '-o',
      file,
    );
    expect(out).toContain('10 hosts, 200 servers');
  });

  it('bitbrains refuses --hosts beyond the limit at once, before reading any trace', async () => {
    const started = Date.now();
    await expect(
      run(
        'import',
        'bitbrains',
        join(dir, 'no-such-folder'),
        '--hosts',
        '100000000',
        '-o',
        join(dir, 'bb.json'),
      ),
    ).rejects.toThrow('--hosts: expected an integer from 1 to 20000, got "100000000"');
    expect(Date.now() - started).toBeLessThan(5000);
    expect(existsSync(join(dir, 'bb.json'))).toBe(false);
  });
});

describe('aicerine snapshot import', () => {
  it('bitbrains: places the sample VMs and writes a valid snapshot', async () => {
    const file = join(dir, 'bb.json');
    const { out } = await run(
      'import',
      'bitbrains',
      SAMPLE,
      '--hosts',
      '8',
      '--seed',
      '5',
      '--at',
      '12',
      '-o',
      file,
    );
    expect(out).toBe(`wrote ${file}: 8 hosts, 300 servers, 0 server groups\n`);
    const s = await readSnapshot(file);
    expect(s.takenAt).toBe('2013-08-01T10:00:00Z');
    await expect(run('import', 'bitbrains', SAMPLE, '--at', 'noon', '-o', file)).rejects.toThrow(
      '--at: expected a non-negative integer, got "noon"',
    );
  });

  it('vmr2l: converts a handwritten instance and prints the warnings', async () => {
    const input = join(dir, 'tiny.json');
    await writeFile(
      input,
      JSON.stringify({
        cluster_list: [
          {
            cluster_name: 'c',
            host_info: [{ node_id: 'h1', status: 'ACTIVE', node_cpu: 8, node_mem_mb: 16384 }],
            vm_instance: [{ instance_id: 'v1', instance_type: 't', host_id: 'h1', allow_migration: 1 }],
            other_requirement: { deployment_set: [{ granularity: 'rack', data: ['v1'] }] },
          },
        ],
        vm_type_list: [{ vm_type: 't', request_cpu: 2, request_mem_mb: 2048 }],
      }),
    );
    const file = join(dir, 'tiny-snapshot.json');
    const { out, err } = await run('import', 'vmr2l', input, '--load-from', SAMPLE, '-o', file);
    expect(out).toBe(`wrote ${file}: 1 hosts, 1 servers, 0 server groups\n`);
    expect(err).toBe(
      'warning: cluster_list[0] (c): 1 rack-level deployment set(s) skipped: Nova has no rack anti-affinity\n',
    );
    const s = await readSnapshot(file);
    expect(s.servers[0]?.load).toBeDefined();
  });
});

describe.runIf(existsSync(VMR2L))('aicerine snapshot import vmr2l on the shared file (read in place)', () => {
  it('converts one cluster', async () => {
    const file = join(dir, 'b04.json');
    const { out } = await run('import', 'vmr2l', VMR2L, '--cluster', 'b04-dpdk-c1', '-o', file);
    expect(out).toMatch(/^wrote .*b04\.json: 43 hosts, 155 servers, \d+ server groups\n$/);
  });
});
