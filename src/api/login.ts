// The dashboard's login: a user name and password forwarded once to the configured Keystone
// (POST /v3/auth/tokens, password method, project scope); the answer is the token Keystone
// issued and what it carries. The password is neither kept nor logged (the request log has no
// bodies, and this module logs nothing).
import { AuthUnavailableError, callerFromToken, identityV3 } from './keystone.js';
import type { LoginRequest, TokenIssuer } from './sources.js';

export class KeystoneTokenIssuer implements TokenIssuer {
  private readonly url: string;

  constructor(
    identityUrl: string,
    private readonly timeoutMs = 10_000,
  ) {
    this.url = `${identityV3(identityUrl)}/auth/tokens?nocatalog`;
  }

  async issue(r: LoginRequest) {
    const body = {
      auth: {
        identity: {
          methods: ['password'],
          password: { user: { name: r.username, password: r.password, domain: { name: r.userDomain } } },
        },
        scope: { project: { name: r.project, domain: { name: r.projectDomain } } },
      },
    };
    let res: Response;
    try {
      res = await fetch(this.url, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (e) {
      throw new AuthUnavailableError(
        `Keystone cannot be reached to log in (${e instanceof Error ? e.message : String(e)})`,
      );
    }
    const text = await res.text();
    // 401: wrong name or password; 400/404: no such project or domain for this user. All refusals.
    if (res.status === 401 || res.status === 400 || res.status === 404) return null;
    if (res.status !== 201 && res.status !== 200)
      throw new AuthUnavailableError(`Keystone answered ${res.status} to a login`);
    const token = res.headers.get('x-subject-token');
    let parsed: unknown = null;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = null;
    }
    const caller = callerFromToken(parsed);
    if (token === null || caller === null)
      throw new AuthUnavailableError('Keystone answered a login without a token');
    return { token, caller };
  }
}
