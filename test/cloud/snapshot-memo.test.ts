import { describe, expect, it } from 'vitest';
import type { NovaServer } from '../../src/cloud/openstack/nova.js';
import { SnapshotMemo } from '../../src/cloud/snapshot-memo.js';

// Only the id matters to the order; the rest is whatever Nova would say.
const nova = (id: string): NovaServer => ({
  id,
  name: id,
  projectId: 'p',
  host: 'h',
  hypervisorHostname: 'h',
  instanceName: null,
  availabilityZone: null,
  status: 'ACTIVE',
  taskState: null,
  vmState: null,
  flavor: { id: null, name: 'f', vcpus: 1, ramMB: 512, diskGB: 1, extraSpecs: {} },
  metadata: {},
  imageId: null,
  volumeIds: [],
  fault: null,
});

/** What a build of these servers leaves in the memo: it knows them (no other field is read here). */
function remember(memo: SnapshotMemo, list: readonly NovaServer[]): void {
  memo.servers.clear();
  for (const s of list)
    memo.servers.set(s.id, {
      nova: s,
      server: {
        id: s.id,
        name: s.name,
        projectId: s.projectId,
        host: 'h',
        status: s.status,
        taskState: null,
        flavor: { name: 'f', vcpus: 1, ramMB: 512, diskGB: 1, extraSpecs: {} },
        sharedStorage: false,
      },
      storage: { shared: false, because: 'test' },
      target: { id: s.id, instanceName: null, host: 'h' },
      stamp: 1,
    });
}

const ids = (list: readonly NovaServer[]) => list.map((s) => s.id);
const bySort = (list: readonly NovaServer[]) => [...ids(list)].sort();

// A small deterministic generator: the same cases every run.
function rng(seed: number): () => number {
  let x = seed;
  return () => {
    x = (x * 1103515245 + 12345) % 2147483648;
    return x / 2147483648;
  };
}

describe('snapshot memo: servers sorted by id', () => {
  it.each([
    ['the memo knows the servers built', true],
    ['the memo knows none (each server not next is taken for new)', false],
  ])('repairs the last order for servers booted and deleted, as a full sort would: %s', (_, knows) => {
    const memo = new SnapshotMemo();
    const r = rng(7);
    const name = () =>
      `s-${Math.floor(r() * 1e9)
        .toString(36)
        .padStart(6, '0')}`;
    let list = Array.from({ length: 500 }, () => nova(name()));
    expect(ids(memo.sorted(list))).toEqual(bySort(list));
    for (let round = 0; round < 20; round++) {
      if (knows) remember(memo, list);
      // As the recorder keeps them: the ones still there in the order first seen, new ones last.
      list = list.filter(() => r() > 0.05);
      for (let k = 0; k < 10; k++) list.push(nova(name()));
      expect(ids(memo.sorted(list))).toEqual(bySort(list));
    }
  });

  it('sorts afresh when servers come back in another order, or an id is listed twice', () => {
    const memo = new SnapshotMemo();
    const list = ['c', 'a', 'd', 'b'].map(nova);
    expect(ids(memo.sorted(list))).toEqual(['a', 'b', 'c', 'd']);
    remember(memo, list);
    const swapped = [list[2]!, list[0]!, list[1]!, list[3]!, nova('e')];
    expect(ids(memo.sorted(swapped))).toEqual(['a', 'b', 'c', 'd', 'e']);
    const twice = [...swapped, nova('a')];
    expect(ids(memo.sorted(twice))).toEqual(['a', 'a', 'b', 'c', 'd', 'e']);
    const fewer = twice.filter((s) => s.id !== 'c');
    expect(ids(memo.sorted(fewer))).toEqual(['a', 'a', 'b', 'd', 'e']);
  });
});
