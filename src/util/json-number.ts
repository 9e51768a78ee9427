// How every numeric command-line value is written: as a JSON number (`1000`, `1e3`, `0.5`), the
// same notation a policy file accepts. Blanks, hex, `Infinity` and empty strings are not numbers.
const JSON_NUMBER = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/;

/** The number the text spells, or undefined when it is not written as a finite JSON number. */
export function readJsonNumber(text: string): number | undefined {
  if (!JSON_NUMBER.test(text)) return undefined;
  const n = Number(text);
  return Number.isFinite(n) ? n : undefined;
}
