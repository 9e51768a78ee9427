import { hostname } from 'node:os';
import { describe, expect, it } from 'vitest';
import { parseServiceConfig } from '../../src/config/load.js';
import { InputError } from '../../src/errors.js';

const parse = (doc: unknown) => parseServiceConfig(doc, { file: 'aicerine.yaml', baseDir: '/etc/aicerine' });

async function problems(doc: unknown): Promise<string[]> {
  try {
    await parse(doc);
  } catch (e) {
    if (e instanceof InputError) return e.message.split('\n');
    throw e;
  }
  throw new Error('expected the configuration to be refused');
}

const MARIADB = { url: 'mysql://aicerine@db.example/aicerine', passwordEnv: 'DB_PASSWORD' };

describe('coordination', () => {
  it('is local by default', async () => {
    expect((await parse({})).config.coordination).toEqual({ kind: 'local' });
  });

  it('reads replicas on etcd with the MariaDB store', async () => {
    const { config } = await parse({
      store: MARIADB,
      coordination: {
        kind: 'etcd',
        replicaId: 'aicerine-1',
        leaseTtl: '10s',
        etcd: {
          endpoints: ['https://etcd1:2379', 'https://etcd2:2379'],
          username: 'aicerine',
          passwordFile: 'etcd.password',
          caFile: 'tls/ca.pem',
        },
      },
    });
    expect(config.coordination).toEqual({
      kind: 'etcd',
      replicaId: 'aicerine-1',
      endpoints: ['https://etcd1:2379', 'https://etcd2:2379'],
      prefix: '/aicerine/',
      username: 'aicerine',
      password: { kind: 'file', path: '/etc/aicerine/etcd.password' },
      tls: { caFile: '/etc/aicerine/tls/ca.pem', certFile: null, keyFile: null },
      leaseTtlMs: 10_000,
      rebalanceIntervalMs: 2000,
    });
    const byHost = await parse({
      store: MARIADB,
      coordination: { kind: 'etcd', etcd: { endpoints: ['http://e:2379'] } },
    });
    expect(byHost.config.coordination).toMatchObject({ replicaId: hostname(), leaseTtlMs: 15_000 });
  });

  it('refuses etcd coordination on a SQLite store, with the reason', async () => {
    expect(
      await problems({ coordination: { kind: 'etcd', etcd: { endpoints: ['http://127.0.0.1:2379'] } } }),
    ).toEqual([
      expect.stringMatching(
        /coordination\.kind.*etcd coordination runs replicas, and replicas share a MariaDB\/MySQL store: set store\.url to mysql:\/\/\.\.\. \(a SQLite store belongs to one process, which needs kind: local\)/,
      ),
    ]);
  });

  it('names each wrong key', async () => {
    const found = await problems({
      store: MARIADB,
      coordination: {
        kind: 'etcd',
        leaseTtl: '1s',
        rebalanceInterval: '5s',
        etcd: { endpoints: ['etcd1:2379'], passwordEnv: 'ETCD_PASSWORD', certFile: 'c.pem' },
      },
    });
    const text = found.join('\n');
    expect(text).toMatch(/coordination\.leaseTtl.*expected at least 3s/);
    expect(text).toMatch(/coordination\.rebalanceInterval.*expected less than coordination\.leaseTtl/);
    expect(text).toMatch(/coordination\.etcd\.endpoints\[0\].*expected an http:\/\/ or https:\/\/ URL/);
    expect(text).toMatch(/coordination\.etcd\.username.*name the etcd user/);
    expect(text).toMatch(/give certFile and keyFile together/);
    expect(await problems({ store: MARIADB, coordination: { kind: 'etcd' } })).toEqual([
      expect.stringMatching(/coordination\.etcd.*kind: etcd needs coordination\.etcd\.endpoints/),
    ]);
    expect(await problems({ coordination: { kind: 'zookeeper' } })).toEqual([
      expect.stringMatching(/coordination\.kind: expected one of "local", "etcd", got "zookeeper"/),
    ]);
  });
});
