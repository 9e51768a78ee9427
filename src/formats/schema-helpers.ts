// Small schema builders whose messages read like the issue text operators see:
// "expected a positive integer".
import { z } from 'zod';
import { describeValue, formatPath, InputError, type InputIssue } from '../errors.js';

export const posInt = (): z.ZodNumber => {
  const m = { error: 'expected a positive integer' };
  return z.number(m).int(m).positive(m);
};
export const nonNegInt = (): z.ZodNumber => {
  const m = { error: 'expected a non-negative integer' };
  return z.number(m).int(m).nonnegative(m);
};
export const nonNeg = (): z.ZodNumber => {
  const m = { error: 'expected a non-negative number' };
  return z.number(m).nonnegative(m);
};
export const positive = (): z.ZodNumber => {
  const m = { error: 'expected a positive number' };
  return z.number(m).positive(m);
};
export const text = (): z.ZodString => z.string({ error: 'expected a string' });
export const nonEmpty = (): z.ZodString => {
  const m = { error: 'expected a non-empty string' };
  return z.string(m).min(1, m);
};
export const isoTime = (): z.ZodString =>
  z
    .string({ error: 'expected an ISO 8601 time' })
    .refine((s) => !Number.isNaN(Date.parse(s)), { error: 'expected an ISO 8601 time' });

const KIND_WORDS: Record<string, string> = {
  object: 'a mapping of keys',
  record: 'a mapping of keys',
  array: 'a list',
  tuple: 'a list',
  string: 'a string',
  number: 'a number',
  int: 'an integer',
  boolean: 'true or false',
  null: 'nothing (null)',
};

/** Turns zod's issues into ours, with the offending value looked up in the input. */
export function toInputIssues(error: z.ZodError, input: unknown, file?: string): InputIssue[] {
  return error.issues.flatMap((issue): InputIssue[] => {
    // An unknown key is most often a typo: name it where it is, one issue per key.
    if (issue.code === 'unrecognized_keys') {
      return issue.keys.map((key) => ({
        file,
        path: formatPath([...issue.path, key]),
        message: 'unknown key (a typo?)',
      }));
    }
    const path = issue.path;
    const value = lookup(input, path);
    let message = issue.message;
    // zod's own wording ("Invalid input: expected object, received array") becomes the words a
    // YAML or JSON author uses; our schema builders already speak that way.
    if (issue.code === 'invalid_type' && message.startsWith('Invalid input')) {
      message = `expected ${KIND_WORDS[issue.expected] ?? issue.expected}`;
    }
    if (issue.code === 'invalid_type' && value === undefined) message = `missing (${message})`;
    if (issue.code === 'invalid_value' && 'values' in issue) {
      message = `expected one of ${issue.values.map((v) => describeValue(v)).join(', ')}`;
    }
    return [{ file, path: formatPath(path), message, value }];
  });
}

function lookup(input: unknown, path: readonly PropertyKey[]): unknown {
  let cur: unknown = input;
  for (const key of path) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<PropertyKey, unknown>)[key];
  }
  return cur;
}

/** A document of another format or version is refused before field checks, with one clear line. */
export function refuseUnknownFormat(doc: unknown, expected: string, file?: string): void {
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) {
    throw new InputError([
      { file, path: '', message: `expected a JSON object with "format": "${expected}"` },
    ]);
  }
  const format = (doc as Record<string, unknown>).format;
  if (format !== expected) {
    throw new InputError([
      {
        file,
        path: 'format',
        message:
          format === undefined ? `missing; expected "${expected}"` : `unknown format, expected "${expected}"`,
        ...(format === undefined ? {} : { value: format }),
      },
    ]);
  }
}
