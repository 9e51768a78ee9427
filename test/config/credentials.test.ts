import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readSecret, sessionSourceFor } from '../../src/config/credentials.js';
import { parseServiceConfig } from '../../src/config/load.js';

let dir = '';
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'aicerine-secret-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('credential references', () => {
  it('become openSession options', async () => {
    expect(await sessionSourceFor({ kind: 'environment' })).toEqual({});
    expect(await sessionSourceFor({ kind: 'clouds-yaml', cloud: 'prod' })).toEqual({
      load: { cloud: 'prod' },
    });
    const { config } = await parseServiceConfig(
      {
        allowInlineSecrets: true,
        credentials: {
          reader: { inline: { auth: { auth_url: 'https://k/v3', token: 't' }, auth_type: 'token' } },
        },
      },
      { baseDir: dir },
    );
    expect(await sessionSourceFor(config.credentials.reader)).toMatchObject({
      config: { method: 'token', auth: { authUrl: 'https://k/v3', token: 't' } },
    });
  });
});

describe('readSecret', () => {
  it('reads the first line of a file, a variable, or the inline value', async () => {
    const f = join(dir, 'pw');
    await writeFile(f, 's3cret\nignored\n');
    expect(await readSecret({ kind: 'file', path: f })).toBe('s3cret');
    expect(await readSecret({ kind: 'env', variable: 'DB_PW' }, { DB_PW: 'x' })).toBe('x');
    expect(await readSecret({ kind: 'inline', value: 'y' })).toBe('y');
  });

  it('names the source, never the value, when it cannot', async () => {
    await expect(readSecret({ kind: 'env', variable: 'DB_PW' }, {})).rejects.toThrow(
      'password variable DB_PW is not set',
    );
    await expect(readSecret({ kind: 'file', path: join(dir, 'none') })).rejects.toThrow(
      `password file ${join(dir, 'none')} cannot be read (ENOENT)`,
    );
    await writeFile(join(dir, 'empty'), '');
    await expect(readSecret({ kind: 'file', path: join(dir, 'empty') })).rejects.toThrow('is empty');
  });
});
