import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { encodeJson } from '../../src/formats/json-file.js';
import { parseSnapshot } from '../../src/formats/snapshot-file.js';
import { synthesizeSnapshot } from '../../src/snapshot/synth.js';

// examples/small-cluster.json is what
//   aicerine snapshot synth --hosts 24 --servers 600 --groups 12 --aggregates 2 --disabled 1 --seed 7 -o examples/small-cluster.json
// writes; if the generator changes, regenerate it with that command.
describe('examples/small-cluster.json', () => {
  it('is exactly what the synth command produces', async () => {
    const file = new URL('../../examples/small-cluster.json', import.meta.url);
    const checkedIn = await readFile(file);
    const made = synthesizeSnapshot({
      hosts: 24,
      servers: 600,
      groups: 12,
      seed: 7,
      aggregates: 2,
      disabled: 1,
    });
    expect(checkedIn.equals(encodeJson('small-cluster.json', made))).toBe(true);
    expect(() => parseSnapshot(JSON.parse(checkedIn.toString('utf8')), 'small-cluster.json')).not.toThrow();
  });
});
