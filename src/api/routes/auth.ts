// Login for the dashboard (a user name and password forwarded to Keystone, answered with the
// token and what it allows) and "who am I" for whoever holds a token, so a client shows only the
// buttons its caller may use.
import type { ApiContext, ZodApp } from '../context.js';
import { ApiError } from '../errors.js';
import type { Caller } from '../keystone.js';
import { API_ACTIONS, allows } from '../policy.js';
import { errorBody, loginBody, loginResult, whoami } from '../schemas.js';
import { LoginThrottle } from '../throttle.js';

export function registerAuth(app: ZodApp, ctx: ApiContext): void {
  const throttle = new LoginThrottle(ctx.config.api.loginThrottle);
  const describe = (c: Caller) => ({
    authenticated: ctx.authMode === 'keystone',
    mode: ctx.authMode === 'keystone' ? ('keystone' as const) : ('no-auth' as const),
    user: c.userName,
    userId: c.userId,
    project: c.projectName,
    roles: c.roles,
    actions: API_ACTIONS.filter((a) => ctx.authMode === 'none' || allows(ctx.policy, a, c)),
    readRoles: [...ctx.policy.read],
    expiresAt: c.expiresAt,
  });

  app.post(
    '/v1/auth/tokens',
    {
      schema: {
        tags: ['auth'],
        summary: 'Log in: Keystone issues a project-scoped token for a user name and password',
        description:
          'Forwarded to the Keystone the service uses; the password is neither stored nor logged. 429 with Retry-After after too many failed logins for the user name or from the address (api.loginThrottle). 409 in the no-auth mode (no token needed).',
        security: [],
        body: loginBody,
        response: { 201: loginResult, 401: errorBody, 409: errorBody, 429: errorBody, 503: errorBody },
      },
    },
    async (req, reply) => {
      if (ctx.authMode === 'none' || ctx.login === null)
        throw new ApiError(409, 'conflict', 'this API runs without authentication: no token is needed');
      const b = req.body;
      const name = `${b.userDomain ?? 'Default'}/${b.username}`;
      const wait = throttle.retryAfter(name, req.ip);
      if (wait !== null) {
        reply.header('Retry-After', String(wait));
        throw new ApiError(
          429,
          'too-many-logins',
          `too many failed logins for this user name or from this address: try again in ${wait} s`,
        );
      }
      const issued = await ctx.login.issue({
        username: b.username,
        password: b.password,
        project: b.project,
        userDomain: b.userDomain ?? 'Default',
        projectDomain: b.projectDomain ?? 'Default',
      });
      if (issued === null) {
        throttle.failed(name, req.ip);
        throw new ApiError(
          401,
          'unauthenticated',
          'Keystone refused these credentials (user name, password, project or domain)',
        );
      }
      throttle.succeeded(name);
      return reply.code(201).send({ ...describe(issued.caller), token: issued.token });
    },
  );

  app.get(
    '/v1/whoami',
    {
      config: { authOnly: true },
      schema: {
        tags: ['auth'],
        summary: 'The caller, its roles and the actions they allow (any valid token; no-auth mode says so)',
        response: { 200: whoami, 401: errorBody },
      },
    },
    async (req) => describe(req.caller!),
  );
}
