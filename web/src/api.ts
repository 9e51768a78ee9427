// The dashboard's one way to the service: JSON over fetch, the Keystone token from sessionStorage
// in X-Auth-Token, and the API's error shape turned into an exception that says what failed.

const TOKEN_KEY = 'aicerine.token';

export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** The request field at fault (`body.args.host`), when the service named one. */
    readonly field: string | null = null,
    readonly value: unknown = undefined,
  ) {
    super(message);
  }
}

export function storedToken(): string | null {
  return sessionStorage.getItem(TOKEN_KEY);
}

export function storeToken(token: string | null): void {
  if (token === null) sessionStorage.removeItem(TOKEN_KEY);
  else sessionStorage.setItem(TOKEN_KEY, token);
}

type Unauthorized = () => void;
let onUnauthorized: Unauthorized = () => {};

/** Called when the service refuses the token (expired, revoked): the app goes back to its login. */
export function whenUnauthorized(f: Unauthorized): void {
  onUnauthorized = f;
}

interface Refusal {
  code: string;
  message: string;
  field: string | null;
  value: unknown;
}

function messageOf(status: number, body: unknown): Refusal {
  if (typeof body === 'object' && body !== null && 'error' in body) {
    const e = (body as { error: { code?: unknown; message?: unknown; field?: unknown; value?: unknown } })
      .error;
    if (typeof e.message === 'string')
      return {
        code: typeof e.code === 'string' ? e.code : String(status),
        message: e.message,
        field: typeof e.field === 'string' ? e.field : null,
        value: e.value,
      };
  }
  return { code: String(status), message: `the service answered ${status}`, field: null, value: undefined };
}

export async function request<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
  // The API refuses a state change without JSON or this header (what a cross-site page sends).
  const headers: Record<string, string> = { accept: 'application/json', 'x-aicerine-client': 'dashboard' };
  const token = storedToken();
  if (token !== null) headers['x-auth-token'] = token;
  if (body !== undefined) headers['content-type'] = 'application/json';
  let res: Response;
  try {
    res = await fetch(path, {
      method,
      headers,
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
  } catch {
    throw new ApiFailure(0, 'unreachable', 'the service cannot be reached');
  }
  const text = await res.text();
  let parsed: unknown = null;
  try {
    parsed = text === '' ? null : JSON.parse(text);
  } catch {
    parsed = null;
  }
  if (!res.ok) {
    const { code, message, field, value } = messageOf(res.status, parsed);
    if (res.status === 401 && path !== '/v1/auth/tokens') onUnauthorized();
    throw new ApiFailure(res.status, code, message, field, value);
  }
  return parsed as T;
}

export const get = <T>(path: string) => request<T>('GET', path);
export const post = <T>(path: string, body: unknown = {}) => request<T>('POST', path, body);

/** "?a=1&b=x" from the defined entries. */
export function query(params: Record<string, string | number | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined) q.set(k, String(v));
  const s = q.toString();
  return s === '' ? '' : `?${s}`;
}
