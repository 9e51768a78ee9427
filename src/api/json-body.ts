// Request bodies: JSON in UTF-8, read strictly (a byte sequence that is not UTF-8 is a 415, not a
// string of replacement characters), and without the keys that change an object's prototype when
// some code copies the body (`__proto__`, `constructor.prototype`): those are refused by name and
// place, not as "not valid JSON".
import { ApiError, fieldPath } from './errors.js';

const UTF8 = new TextDecoder('utf-8', { fatal: true });

export function parseJsonBody(raw: Buffer): unknown {
  let text: string;
  try {
    text = UTF8.decode(raw);
  } catch {
    throw new ApiError(
      415,
      'unsupported-media-type',
      'body: not UTF-8 (JSON bodies are read as UTF-8 only)',
      'body',
    );
  }
  if (text.trim() === '')
    throw new ApiError(
      400,
      'invalid-json',
      'body: empty, but Content-Type says JSON (send {} or no Content-Type)',
      'body',
    );
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    throw new ApiError(400, 'invalid-json', 'body: not valid JSON', 'body');
  }
  const key = prototypeKey(doc);
  if (key !== null) {
    const field = fieldPath('body', key);
    throw new ApiError(
      400,
      'forbidden-key',
      `${field}: a key named ${key[key.length - 1]} is refused (it would reach an object's prototype)`,
      field,
    );
  }
  return doc;
}

interface Visit {
  value: unknown;
  key: string | null;
  parent: Visit | null;
}

function pathOf(v: Visit): string[] {
  const out: string[] = [];
  for (let at: Visit | null = v; at !== null && at.key !== null; at = at.parent) out.unshift(at.key);
  return out;
}

/** The path of the first `__proto__` key, or of `prototype` under a `constructor` key; null: none. */
function prototypeKey(doc: unknown): string[] | null {
  // Iterative, each step linked to its parent: a body may nest thousands of levels deep.
  const stack: Visit[] = [{ value: doc, key: null, parent: null }];
  while (stack.length > 0) {
    const at = stack.pop()!;
    const value = at.value;
    if (value === null || typeof value !== 'object') continue;
    if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push({ value: value[i], key: String(i), parent: at });
      continue;
    }
    const record = value as Record<string, unknown>;
    for (const k of Object.keys(record)) {
      if (k === '__proto__') return [...pathOf(at), k];
      const v = record[k];
      if (k === 'constructor' && v !== null && typeof v === 'object' && Object.hasOwn(v, 'prototype'))
        return [...pathOf(at), k, 'prototype'];
      stack.push({ value: v, key: k, parent: at });
    }
  }
  return null;
}
