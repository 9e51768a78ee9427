// Argument parsing shared by the task kinds: every problem names its field and value, and all
// problems of a request are reported at once (InputError).
import { InputError, type InputIssue } from '../../errors.js';

/** Nova host names: letters, digits, dots, dashes, underscores; at most 255 characters. */
const HOST_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,254}$/;

export class ArgsReader {
  readonly issues: InputIssue[] = [];
  private readonly raw: Record<string, unknown>;

  constructor(raw: unknown, known: readonly string[]) {
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
      this.issues.push({ path: '', message: 'expected a mapping of arguments', value: raw });
      this.raw = {};
      return;
    }
    this.raw = raw as Record<string, unknown>;
    for (const key of Object.keys(this.raw))
      if (!known.includes(key))
        this.issues.push({
          path: key,
          message: `unknown argument (known: ${known.join(', ')})`,
          value: this.raw[key],
        });
  }

  hostName(key: string, required: true): string;
  hostName(key: string, required: false): string | null;
  hostName(key: string, required: boolean): string | null {
    const v = this.raw[key];
    if (v === undefined || v === null) {
      if (required) this.issues.push({ path: key, message: 'required: a compute host name' });
      return null;
    }
    if (typeof v !== 'string' || !HOST_NAME.test(v)) {
      this.issues.push({
        path: key,
        message: 'expected a compute host name (letters, digits, . _ -)',
        value: v,
      });
      return null;
    }
    return v;
  }

  /** An optional list of distinct compute host names (default empty). */
  hostNames(key: string): string[] {
    const v = this.raw[key];
    if (v === undefined || v === null) return [];
    if (!Array.isArray(v)) {
      this.issues.push({ path: key, message: 'expected a list of compute host names', value: v });
      return [];
    }
    const names: string[] = [];
    v.forEach((n, i) => {
      if (typeof n !== 'string' || !HOST_NAME.test(n))
        this.issues.push({
          path: `${key}[${i}]`,
          message: 'expected a compute host name (letters, digits, . _ -)',
          value: n,
        });
      else if (names.includes(n))
        this.issues.push({ path: `${key}[${i}]`, message: 'listed twice', value: n });
      else names.push(n);
    });
    return names;
  }

  /** A Keystone id (32 hex digits, dashes allowed) or name. */
  projectRef(key: string): string | null {
    const v = this.raw[key];
    if (typeof v !== 'string' || v.trim() === '' || v.length > 255) {
      this.issues.push({ path: key, message: 'required: a project id or name', value: v });
      return null;
    }
    return v;
  }

  bool(key: string, fallback: boolean): boolean {
    const v = this.raw[key];
    if (v === undefined || v === null) return fallback;
    if (typeof v !== 'boolean') {
      this.issues.push({ path: key, message: 'expected true or false', value: v });
      return fallback;
    }
    return v;
  }

  /** Throws InputError with every issue found. */
  done(): void {
    if (this.issues.length > 0) throw new InputError(this.issues);
  }
}
