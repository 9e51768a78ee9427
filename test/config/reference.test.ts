import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { serviceJsonSchema } from '../../src/config/json-schema.js';
import { configReference } from '../../src/config/reference.js';

describe('docs/configuration.md', () => {
  it('is what the schema generates (run `npm run docs:config` after changing the schema)', async () => {
    const page = await readFile('docs/configuration.md', 'utf8');
    expect(page === configReference(), 'docs/configuration.md is stale: run npm run docs:config').toBe(true);
  });

  it('lists every key of the schema with a meaning', () => {
    const page = configReference();
    const keys: string[] = [];
    const visit = (n: ReturnType<typeof serviceJsonSchema>, path: string[]) => {
      const obj = n.properties ? n : n.anyOf?.find((x) => x.properties);
      for (const [k, c] of Object.entries(obj?.properties ?? {})) {
        if (path.length === 0 && (k === 'defaults' || k === 'aggregates')) continue;
        keys.push([...path, k].join('.'));
        visit(c, [...path, k]);
      }
    };
    visit(serviceJsonSchema(), []);
    const aggregate = serviceJsonSchema().properties?.defaults;
    if (aggregate) visit(aggregate, []);
    expect(keys.length).toBeGreaterThan(80);
    for (const k of keys) {
      const row = page.split('\n').find((l) => l.startsWith(`| \`${k}\` |`));
      expect(row, k).toBeDefined();
      expect(row?.split(' | ')[3]?.trim().length, `${k} has no meaning`).toBeGreaterThan(5);
    }
  });
});
