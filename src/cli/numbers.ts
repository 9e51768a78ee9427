// Numeric command-line options, parsed one way for every command. A number is written as in JSON
// (`1000`, `1e3`, `0.5`, `1e-6`): the same numbers a policy file accepts, since YAML reads `1e3`
// as 1000 too. Whole-number options refuse fractions; hex, blanks, `Infinity` and empty strings
// are refused everywhere. Every refusal names the flag, the accepted range and the value.
import { InputError } from '../errors.js';
import { readJsonNumber } from '../util/json-number.js';

export interface NumberRange {
  min?: number;
  max?: number;
  /** The smallest value is excluded (e.g. a speed or a wait that must be above 0). */
  aboveMin?: boolean;
}

export const SEED_MAX = 0xffffffff;

function refuse(flag: string, expected: string, value: string): never {
  throw new InputError([{ path: flag, message: `expected ${expected}`, value }]);
}

function describeRange(integer: boolean, { min, max, aboveMin }: NumberRange): string {
  const kind = integer ? 'integer' : 'number';
  const low = aboveMin ? `above ${min}` : `from ${min}`;
  if (min !== undefined && max !== undefined)
    return `${integer ? 'an integer' : 'a number'} ${low} to ${max}`;
  if (min === 0) return aboveMin ? `a positive ${kind}` : `a non-negative ${kind}`;
  if (min === 1 && integer && !aboveMin) return 'a positive integer';
  if (min !== undefined) return `${integer ? 'an integer' : 'a number'} ${aboveMin ? '>' : '>='} ${min}`;
  if (max !== undefined) return `${integer ? 'an integer' : 'a number'} <= ${max}`;
  return integer ? 'an integer' : 'a number';
}

export function parseNumberOption(flag: string, value: string, range: NumberRange = {}): number {
  const n = readJsonNumber(value);
  const expected = describeRange(false, range);
  if (n === undefined) refuse(flag, expected, value);
  const { min, max, aboveMin } = range;
  if (min !== undefined && (aboveMin ? n <= min : n < min)) refuse(flag, expected, value);
  if (max !== undefined && n > max) refuse(flag, expected, value);
  return n;
}

export function parseIntegerOption(flag: string, value: string, range: NumberRange = {}): number {
  const n = readJsonNumber(value);
  const expected = describeRange(true, range);
  if (n === undefined || !Number.isSafeInteger(n)) refuse(flag, expected, value);
  const { min, max, aboveMin } = range;
  if (min !== undefined && (aboveMin ? n <= min : n < min)) refuse(flag, expected, value);
  if (max !== undefined && n > max) refuse(flag, expected, value);
  return n;
}

export const parseSeedOption = (flag: string, value: string): number =>
  parseIntegerOption(flag, value, { min: 0, max: SEED_MAX });

export const parsePortOption = (flag: string, value: string): number =>
  parseIntegerOption(flag, value, { min: 0, max: 65535 });
