// What the operator commands (plans, executions, quarantine, pause, resume) share: the API's
// address, a Keystone token from clouds.yaml or OS_* (as every other command authenticates), and
// errors that say what to do when the service is unreachable or refuses.
import type { Command } from 'commander';
import { openSession } from '../cloud/session.js';

export const DEFAULT_API_URL = 'http://127.0.0.1:8780';

export interface ApiFlags {
  api?: string;
  cloud?: string;
  /** false with --no-auth (the demo's loopback API). */
  auth: boolean;
  json?: boolean;
}

export function withApiOptions(cmd: Command): Command {
  return cmd
    .option('--api <url>', `the Aicerine API (default $AICERINE_API_URL or ${DEFAULT_API_URL})`)
    .option('--cloud <name>', 'clouds.yaml entry to get a Keystone token from (default OS_CLOUD, else OS_*)')
    .option('--no-auth', 'send no token (an API started in the loopback no-auth mode)')
    .option('--json', 'print the API answer as JSON');
}

export class ApiCallError extends Error {
  override readonly name = 'ApiCallError';
}

export class ApiClient {
  constructor(
    readonly baseUrl: string,
    private readonly token: string | null,
  ) {}

  get(path: string, query: Record<string, string | number | undefined> = {}): Promise<unknown> {
    const q = Object.entries(query)
      .filter((e): e is [string, string | number] => e[1] !== undefined)
      .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`)
      .join('&');
    return this.send('GET', q === '' ? path : `${path}?${q}`);
  }

  post(path: string, body: Record<string, unknown> = {}): Promise<unknown> {
    return this.send('POST', path, body);
  }

  private async send(method: string, path: string, body?: unknown): Promise<unknown> {
    const url = `${this.baseUrl}${path}`;
    let res: Response;
    try {
      res = await fetch(url, {
        method,
        headers: {
          Accept: 'application/json',
          // The API refuses a state change without JSON or this header (what a cross-site page sends).
          'X-Aicerine-Client': 'cli',
          ...(this.token !== null ? { 'X-Auth-Token': this.token } : {}),
          ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}),
        },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        signal: AbortSignal.timeout(30_000),
      });
    } catch (e) {
      const cause = (e as { cause?: { code?: string; message?: string } }).cause;
      throw new ApiCallError(
        `the Aicerine API at ${this.baseUrl} cannot be reached (${cause?.code ?? cause?.message ?? (e as Error).message}): is \`aicerine serve\` running there? Set --api or AICERINE_API_URL`,
      );
    }
    const text = await res.text();
    let parsed: unknown = null;
    try {
      parsed = text === '' ? null : JSON.parse(text);
    } catch {
      throw new ApiCallError(`${method} ${url} answered ${res.status} with something that is not JSON`);
    }
    if (!res.ok) {
      const err = (parsed as { error?: { message?: string; requestId?: string } } | null)?.error;
      const hint =
        res.status === 401
          ? ' (check the credentials: --cloud, OS_CLOUD or OS_*)'
          : res.status === 403
            ? ' (ask for a role that allows it: see docs/api.md)'
            : '';
      throw new ApiCallError(
        `${method} ${path}: ${res.status} ${err?.message ?? 'no message'}${hint}${err?.requestId ? ` [request ${err.requestId}]` : ''}`,
      );
    }
    return parsed;
  }
}

export async function apiClient(flags: ApiFlags): Promise<ApiClient> {
  const base = (flags.api ?? process.env.AICERINE_API_URL ?? DEFAULT_API_URL).replace(/\/+$/, '');
  if (!/^https?:\/\//.test(base))
    throw new ApiCallError(`--api must be an http(s) URL, got ${JSON.stringify(base)}`);
  if (!flags.auth) return new ApiClient(base, null);
  const session = await openSession(flags.cloud !== undefined ? { load: { cloud: flags.cloud } } : {});
  return new ApiClient(base, (await session.token()).token);
}

/** Prints rows as aligned columns. */
export function formatTable(headers: string[], rows: (string | number | null)[][]): string {
  const cells = [headers, ...rows.map((r) => r.map((c) => (c === null ? '-' : String(c))))];
  const widths = headers.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? '').length)));
  return `${cells.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  ')).join('\n')}\n`;
}

export interface Paged<T> {
  items: T[];
  nextCursor: string | null;
}

/** A table and, when there is more, how to get it. */
export function printPage<T>(
  page: Paged<T>,
  headers: string[],
  row: (item: T) => (string | number | null)[],
  json: boolean | undefined,
): void {
  if (json) {
    process.stdout.write(`${JSON.stringify(page, null, 2)}\n`);
    return;
  }
  if (page.items.length === 0) process.stdout.write('(none)\n');
  else process.stdout.write(formatTable(headers, page.items.map(row)));
  if (page.nextCursor !== null) process.stdout.write(`more: --cursor ${page.nextCursor}\n`);
}

export function printJsonOr(json: boolean | undefined, value: unknown, text: () => string): void {
  process.stdout.write(json ? `${JSON.stringify(value, null, 2)}\n` : text());
}

export function parseSteps(value: string): number[] {
  const steps = value.split(',').map((s) => s.trim());
  if (steps.some((s) => !/^\d+$/.test(s)))
    throw new ApiCallError(
      `--steps: expected step numbers separated by commas (e.g. 1,3,4), got ${JSON.stringify(value)}`,
    );
  return steps.map(Number);
}
