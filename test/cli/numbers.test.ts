import { describe, expect, it } from 'vitest';
import { parseIntegerOption, parseNumberOption, parseSeedOption } from '../../src/cli/numbers.js';

describe('numeric options', () => {
  it.each([
    ['1000', 1000],
    ['1e3', 1000],
    ['2.0', 2],
    ['0', 0],
  ])('reads the whole number %j', (text, n) => {
    expect(parseIntegerOption('--n', text, { min: 0 })).toBe(n);
  });

  it.each([
    '',
    ' 5',
    '5 ',
    '0x10',
    '1_000',
    '+5',
    '2.5',
    'Infinity',
    'NaN',
    '1e400',
    '9007199254740993',
    '--',
  ])('refuses %j as a whole number, naming the flag', (text) => {
    expect(() => parseIntegerOption('--n', text, { min: 0 })).toThrow(
      `--n: expected a non-negative integer, got ${JSON.stringify(text)}`,
    );
  });

  it('says the range it accepts', () => {
    expect(() => parseIntegerOption('--per-host-outgoing', '0', { min: 1 })).toThrow(
      '--per-host-outgoing: expected a positive integer, got "0"',
    );
    expect(() => parseSeedOption('--seed', '-1')).toThrow(
      '--seed: expected an integer from 0 to 4294967295, got "-1"',
    );
    expect(() => parseNumberOption('--probe-wait', '0', { min: 0, aboveMin: true })).toThrow(
      '--probe-wait: expected a positive number, got "0"',
    );
  });

  it('reads reals in the same notation', () => {
    expect(parseNumberOption('--tolerance', '1e-6', { min: 0 })).toBe(1e-6);
    expect(parseNumberOption('--speed', '0.5', { min: 0 })).toBe(0.5);
    expect(() => parseNumberOption('--speed', '.5', { min: 0 })).toThrow(
      '--speed: expected a non-negative number',
    );
  });
});
