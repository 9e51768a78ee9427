// The house's layering, read from the sources: the store and the records sit below the domains
// whose ports they implement, and the checker stays independent of the planner. An import that
// runs upward again fails here, naming the file, the line and the specifier.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '..', '..');
const SRC = join(ROOT, 'src');

interface Arrow {
  file: string;
  line: number;
  specifier: string;
  /** The imported module's folder under src ("executor", "store"...), or null outside src. */
  target: string | null;
}

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sources(path);
    return e.name.endsWith('.ts') ? [path] : [];
  });
}

// Static imports, re-exports and dynamic imports: anything that makes one module load another.
const IMPORT = /(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)['"]([^'"]+)['"]/gm;

/** The relative imports of a source text, each with the src folder it lands in. */
function arrows(file: string, text: string): Arrow[] {
  const out: Arrow[] = [];
  for (const m of text.matchAll(IMPORT)) {
    const specifier = m[1]!;
    if (!specifier.startsWith('.')) continue;
    const landed = relative(SRC, resolve(dirname(file), specifier));
    const top = landed.startsWith('..') ? null : (landed.split(/[\\/]/)[0] ?? null);
    const line = text.slice(0, m.index).split('\n').length;
    out.push({ file: relative(ROOT, file), line, specifier, target: top });
  }
  return out;
}

function arrowsOf(folder: string): Arrow[] {
  return sources(join(SRC, folder)).flatMap((f) => arrows(f, readFileSync(f, 'utf8')));
}

function describeArrows(list: Arrow[]): string[] {
  return list.map((a) => `${a.file}:${a.line} imports ${a.specifier}`);
}

describe('layering of src', () => {
  it('reads imports, re-exports and dynamic imports, and where they land', () => {
    const file = join(SRC, 'store', 'x.ts');
    const text = [
      "import type { A } from '../executor/journal.js';",
      "export { B } from './paging.js';",
      "const c = await import('../tasks/types.js');",
      "import 'node:fs';",
    ].join('\n');
    expect(arrows(file, text).map((a) => [a.line, a.target])).toEqual([
      [1, 'executor'],
      [2, 'store'],
      [3, 'tasks'],
    ]);
  });

  it('the store imports none of the domains whose ports it implements', () => {
    const store = arrowsOf('store');
    // The scan must see the store's own imports, or an empty result would prove nothing.
    expect(store.filter((a) => a.target === 'store').length).toBeGreaterThan(20);
    const upward = store.filter((a) =>
      ['executor', 'tasks', 'maintenance', 'prevention', 'loop', 'service', 'api', 'cli'].includes(
        a.target ?? '',
      ),
    );
    expect(describeArrows(upward)).toEqual([]);
  });

  it('the records, below the store and the domains both, import only each other', () => {
    const records = arrowsOf('records');
    expect(records.length).toBeGreaterThan(0);
    expect(describeArrows(records.filter((a) => a.target !== 'records'))).toEqual([]);
  });

  it('the checker does not import the planner', () => {
    const checker = arrowsOf('checker');
    expect(checker.length).toBeGreaterThan(0);
    expect(describeArrows(checker.filter((a) => a.target === 'planner'))).toEqual([]);
  });
});
