import { describe, expect, it } from 'vitest';
import { InputError } from '../../src/errors.js';
import { profileWarnings } from '../../src/formats/snapshot-consistency.js';
import { parseSnapshot } from '../../src/formats/snapshot-file.js';
import type { LoadProfiles } from '../../src/model/snapshot.js';
import { cluster, host, server } from '../fixtures/cluster.js';

const slots = (n: number, v: number | null = 1) => Array.from({ length: n }, () => v);
const counts = (n: number, v = 1) => Array.from({ length: n }, () => v);

const profiles = (over: Partial<LoadProfiles> = {}): LoadProfiles => ({
  format: 'aicerine-profiles/1',
  resolution: 'hour-of-day',
  quantile: 0.9,
  timeZone: 'Europe/Amsterdam',
  from: '2026-11-16T00:00:00Z',
  to: '2026-11-30T00:00:00Z',
  refreshedAt: '2026-11-30T00:05:00Z',
  minSamples: 3,
  servers: { s1: { cpu: slots(48), memoryMB: slots(48, null), samples: counts(48, 10) } },
  ...over,
});

const withProfiles = (p: unknown) => ({
  ...cluster([host('a')], [server('s1', 'a')], []),
  profiles: p,
});

function messages(doc: unknown): string[] {
  try {
    parseSnapshot(doc, 'snap.json');
  } catch (err) {
    if (err instanceof InputError) return err.message.split('\n');
    throw err;
  }
  throw new Error('expected an InputError');
}

describe('snapshot profiles extension', () => {
  it('keeps a snapshot without profiles valid, and accepts one with them', () => {
    expect(parseSnapshot(cluster([host('a')], [server('s1', 'a')], [])).profiles).toBeUndefined();
    const p = profiles({
      errors: {
        'agg-1': { meanAbsolute: 0.04, hours: 240, from: '2026-11-29T00:00:00Z', to: '2026-11-30T00:00:00Z' },
      },
    });
    expect(parseSnapshot(withProfiles(p)).profiles).toEqual(p);
  });

  it('refuses slot lists that do not fit the resolution, naming server and field', () => {
    const p = profiles({
      resolution: 'hour-of-week',
      servers: { s1: { cpu: slots(168), samples: counts(48, 1) } },
    });
    expect(messages(withProfiles(p))).toEqual([
      'snap.json: profiles.servers.s1.samples: expected 168 slots for resolution hour-of-week, got 48',
    ]);
  });

  it('refuses a history window that ends before it starts', () => {
    expect(messages(withProfiles(profiles({ from: '2026-12-01T00:00:00Z' })))).toEqual([
      'snap.json: profiles.from: after profiles.to (2026-11-30T00:00:00Z), got "2026-12-01T00:00:00Z"',
    ]);
  });

  it('refuses an unknown format version and a bad quantile', () => {
    expect(
      messages(withProfiles(profiles({ format: 'aicerine-profiles/2' as 'aicerine-profiles/1' })))[0],
    ).toMatch(/profiles\.format: expected one of "aicerine-profiles\/1", got "aicerine-profiles\/2"/);
    expect(messages(withProfiles(profiles({ quantile: 1.5 })))[0]).toMatch(/profiles\.quantile/);
  });

  it('keeps profiles of servers the snapshot does not hold, with a warning', () => {
    const p = profiles({ servers: { gone: { samples: counts(48, 0) } } });
    const s = parseSnapshot(withProfiles(p));
    expect(profileWarnings(s)).toEqual([
      'profiles.servers: 1 profile(s) of servers not in the snapshot, ignored (gone)',
    ]);
  });
});
