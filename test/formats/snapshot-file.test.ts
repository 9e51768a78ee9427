import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { InputError } from '../../src/errors.js';
import { parseSnapshot, readSnapshot, writeSnapshot } from '../../src/formats/snapshot-file.js';
import { cluster, group, host, server } from '../fixtures/cluster.js';

const valid = () =>
  cluster(
    [host('a'), host('b')],
    [server('s1', 'a'), server('s2', 'b')],
    [group('g', 'anti-affinity', ['s1', 's2'])],
  );

function messages(fn: () => unknown): string[] {
  try {
    fn();
  } catch (err) {
    if (err instanceof InputError) return err.message.split('\n');
    throw err;
  }
  throw new Error('expected an InputError');
}

describe('parseSnapshot', () => {
  it('accepts a valid snapshot and keeps extra fields', () => {
    const doc = { ...valid(), extra: { note: 'kept' } };
    expect(parseSnapshot(structuredClone(doc), 'x.json')).toMatchObject({ extra: { note: 'kept' } });
  });

  it.each([
    {
      name: 'a negative VCPU total',
      edit: (d: ReturnType<typeof valid>) => (d.hosts[1]!.inventory.VCPU!.total = -4),
      message: 'snap.json: hosts[1].inventory.VCPU.total: expected a positive integer, got -4',
    },
    {
      name: 'an unknown service state',
      edit: (d: ReturnType<typeof valid>) => ((d.hosts[0]!.service as { state: string }).state = 'sideways'),
      message: 'snap.json: hosts[0].service.state: expected one of "up", "down", got "sideways"',
    },
    {
      name: 'a missing server id',
      edit: (d: ReturnType<typeof valid>) => delete (d.servers[0] as { id?: string }).id,
      message: /servers\[0\]\.id: missing/,
    },
    {
      name: 'an unknown group policy',
      edit: (d: ReturnType<typeof valid>) => ((d.serverGroups[0] as { policy: string }).policy = 'nearby'),
      message: /serverGroups\[0\]\.policy: expected one of .*got "nearby"/,
    },
  ])('refuses $name, naming file, path and value', ({ edit, message }) => {
    const doc = valid();
    edit(doc);
    const lines = messages(() => parseSnapshot(doc, 'snap.json'));
    if (typeof message === 'string') expect(lines).toContain(message);
    else expect(lines.some((l) => message.test(l))).toBe(true);
  });

  it('refuses an unknown format before anything else', () => {
    expect(messages(() => parseSnapshot({ ...valid(), format: 'aicerine-snapshot/9' }, 'f.json'))).toEqual([
      'f.json: format: unknown format, expected "aicerine-snapshot/1", got "aicerine-snapshot/9"',
    ]);
  });

  it.each([
    {
      name: 'usage above capacity',
      edit: (d: ReturnType<typeof valid>) => (d.hosts[0]!.usage.VCPU = 300),
      message: /hosts\[0\]\.usage\.VCPU: usage above capacity \(16 - 0\) \* 1 = 16, got 300/,
    },
    {
      name: 'a server on an unknown host',
      edit: (d: ReturnType<typeof valid>) => (d.servers[1]!.host = 'ghost'),
      message: /servers\[1\]\.host: server on an unknown host, got "ghost"/,
    },
    {
      name: 'a group member that does not exist',
      edit: (d: ReturnType<typeof valid>) => d.serverGroups[0]!.members.push('nobody'),
      message: /serverGroups\[0\]\.members\[2\]: group member that does not exist, got "nobody"/,
    },
    {
      name: 'a server in two groups',
      edit: (d: ReturnType<typeof valid>) => d.serverGroups.push(group('h', 'affinity', ['s1'])),
      message: /serverGroups\[1\]\.members\[0\]: server already in serverGroups\[0\]/,
    },
    {
      name: 'a flavor larger than any host',
      edit: (d: ReturnType<typeof valid>) => (d.servers[0]!.flavor.vcpus = 1e9),
      message:
        /servers\[0\]\.flavor\.vcpus: more than any host can hold \(the largest holds \d+ VCPU\), got 1000000000/,
    },
    {
      name: 'a flavor with more memory than any host',
      edit: (d: ReturnType<typeof valid>) => (d.servers[1]!.flavor.ramMB = 1e9),
      message: /servers\[1\]\.flavor\.ramMB: more than any host can hold \(the largest holds \d+ MiB\)/,
    },
    {
      name: 'duplicate host names',
      edit: (d: ReturnType<typeof valid>) => (d.hosts[1]!.name = 'a'),
      message: /hosts\[1\]\.name: duplicate host name/,
    },
  ])('refuses a contradictory snapshot: $name', ({ edit, message }) => {
    const doc = valid();
    edit(doc);
    expect(messages(() => parseSnapshot(doc, 's.json')).some((l) => message.test(l))).toBe(true);
  });

  it('collects every problem, not only the first', () => {
    const doc = valid();
    doc.hosts[0]!.inventory.VCPU!.total = 0;
    doc.servers[0]!.flavor.vcpus = -1;
    expect(messages(() => parseSnapshot(doc, 's.json')).length).toBe(2);
  });
});

describe('snapshot files', () => {
  const dir = mkdtempSync(join(tmpdir(), 'aicerine-formats-'));

  it('round-trips .json and .json.gz with deterministic bytes', async () => {
    for (const name of ['a.json', 'a.json.gz']) {
      const path = join(dir, name);
      await writeSnapshot(path, valid());
      const first = readFileSync(path);
      await writeSnapshot(path, valid());
      expect(readFileSync(path).equals(first)).toBe(true);
      expect(await readSnapshot(path)).toEqual(valid());
    }
  });

  it('reads gzip by content, whatever the name', async () => {
    const path = join(dir, 'plain-name.json');
    writeFileSync(path, gzipSync(JSON.stringify(valid())));
    expect((await readSnapshot(path)).hosts).toHaveLength(2);
  });

  it('refuses a folder, a binary file and non-UTF-8 text in words, never echoing bytes', async () => {
    await expect(readSnapshot(dir)).rejects.toThrow(`${dir}: is a folder, not a file`);
    const png = join(dir, 'image.png');
    writeFileSync(
      png,
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d, 0x49, 0x48]),
    );
    const err = await readSnapshot(png).then(
      () => new Error('read'),
      (e: unknown) => e as Error,
    );
    expect(err.message).toBe(`${png}: is a binary file, not text (a JSON or YAML document was expected)`);
    const latin1 = join(dir, 'latin1.json');
    writeFileSync(latin1, Buffer.from([0x7b, 0x22, 0xe9, 0x22, 0x7d]));
    await expect(readSnapshot(latin1)).rejects.toThrow(`${latin1}: is not UTF-8 text`);
  });

  it('says which file is missing or not JSON', async () => {
    await expect(readSnapshot(join(dir, 'none.json'))).rejects.toThrow(/none\.json: no such file/);
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, '{ not json');
    await expect(readSnapshot(bad)).rejects.toThrow(/bad\.json: not valid JSON/);
  });
});
