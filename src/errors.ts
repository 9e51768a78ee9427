// Errors for bad input: every issue says where (file, JSON path) and what (message, value),
// and all issues are collected so an operator fixes a file in one pass.

export interface InputIssue {
  file?: string | undefined;
  /** JSON path in dotted/bracket form, e.g. `hosts[3].inventory.VCPU.total`; empty for the document itself. */
  path: string;
  message: string;
  value?: unknown;
}

const MAX_SHOWN = 20;

export class InputError extends Error {
  readonly issues: InputIssue[];

  constructor(issues: InputIssue[]) {
    super(formatIssues(issues));
    this.name = 'InputError';
    this.issues = issues;
  }
}

export function formatIssue(issue: InputIssue): string {
  const where = [issue.file, issue.path].filter((p) => p !== undefined && p !== '').join(': ');
  const got = 'value' in issue ? `, got ${describeValue(issue.value)}` : '';
  return `${where ? `${where}: ` : ''}${issue.message}${got}`;
}

export function formatIssues(issues: InputIssue[]): string {
  const lines = issues.slice(0, MAX_SHOWN).map(formatIssue);
  if (issues.length > MAX_SHOWN) lines.push(`... and ${issues.length - MAX_SHOWN} more problems`);
  return lines.join('\n');
}

export function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (typeof value === 'string')
    return JSON.stringify(value.length > 60 ? `${value.slice(0, 57)}...` : value);
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return String(value);
  if (Array.isArray(value))
    return value.length === 1 ? 'a list of 1 item' : `a list of ${value.length} items`;
  return 'a mapping of keys';
}

/** `['hosts', 3, 'inventory']` -> `hosts[3].inventory` */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else {
      const k = String(key);
      out += /^[A-Za-z_$][\w$:-]*$/.test(k) ? (out ? `.${k}` : k) : `[${JSON.stringify(k)}]`;
    }
  }
  return out;
}
