// Keystone v3: version discovery, tokens (password, application_credential, token), catalog,
// application credentials with access rules.
import { keystoneTime } from '../clock.js';
import { keystoneId } from '../ids.js';
import {
  type AppCredential,
  DOMAIN,
  type KeystoneState,
  type SimUser,
  type TokenInfo,
} from '../keystone-state.js';
import { type Ctx, isRecord, type Route, route, sendEmpty, sendJson, str } from './respond.js';

export const KEYSTONE_PREFIX = '/identity';

export interface CatalogService {
  type: string;
  name: string;
  url: string;
}

export function keystoneError(ctx: Ctx, code: number, message: string): void {
  const title: Record<number, string> = {
    400: 'Bad Request',
    401: 'Unauthorized',
    403: 'Forbidden',
    404: 'Not Found',
    409: 'Conflict',
  };
  sendJson(ctx, code, { error: { code, message, title: title[code] ?? 'Error' } });
}

const UNAUTHENTICATED = 'The request you have made requires authentication.';

function versionDoc(origin: string): Record<string, unknown> {
  return {
    id: 'v3.14',
    status: 'stable',
    updated: '2020-04-07T00:00:00Z',
    links: [{ rel: 'self', href: `${origin}${KEYSTONE_PREFIX}/v3/` }],
    'media-types': [{ base: 'application/json', type: 'application/vnd.openstack.identity-v3+json' }],
  };
}

export function keystoneRoutes(
  ks: KeystoneState,
  catalog: (origin: string, projectId: string) => CatalogService[],
): Route[] {
  const wallNow = (): number => Date.now();

  const tokenBody = (ctx: Ctx, t: TokenInfo, withCatalog: boolean): Record<string, unknown> => {
    const user = ks.users.get(t.userId) as SimUser;
    const project = ks.projects.get(t.projectId);
    const body: Record<string, unknown> = {
      methods: t.methods,
      user: { domain: DOMAIN, id: user.id, name: user.name, password_expires_at: null },
      audit_ids: [t.auditId],
      expires_at: keystoneTime(t.expiresMs),
      issued_at: keystoneTime(t.issuedMs),
      project: { domain: DOMAIN, id: t.projectId, name: project?.name ?? t.projectId },
      is_domain: false,
      roles: t.roles.map((r) => ({ id: ks.roleIds.get(r) ?? keystoneId('role', r), name: r })),
    };
    if (t.appCredential) {
      const ac = t.appCredential;
      body.application_credential = {
        id: ac.id,
        name: ac.name,
        restricted: !ac.unrestricted,
        ...(ac.accessRules.length > 0 ? { access_rules: ac.accessRules } : {}),
      };
    }
    if (withCatalog) {
      body.catalog = catalog(ctx.origin, t.projectId).map((svc) => ({
        endpoints: ['public', 'internal', 'admin'].map((iface) => ({
          id: keystoneId('endpoint', svc.type, iface),
          interface: iface,
          region_id: 'RegionOne',
          url: svc.url,
          region: 'RegionOne',
        })),
        id: keystoneId('service', svc.type),
        type: svc.type,
        name: svc.name,
      }));
    }
    return { token: body };
  };

  const authenticate = (ctx: Ctx): TokenInfo | string => {
    const auth = isRecord(ctx.body) && isRecord(ctx.body.auth) ? ctx.body.auth : null;
    const identity = auth && isRecord(auth.identity) ? auth.identity : null;
    const methods =
      identity && Array.isArray(identity.methods)
        ? identity.methods.filter((m) => typeof m === 'string')
        : [];
    if (!auth || !identity || methods.length === 0)
      return 'bad:Expecting to find identity in auth. The server could not comply with the request since it is either malformed or otherwise incorrect. The client is assumed to be in error.';
    const now = wallNow();
    const method = methods[0] as string;
    if (method === 'application_credential') {
      const ac = isRecord(identity.application_credential) ? identity.application_credential : {};
      const secret = str(ac.secret) ?? '';
      let cred: AppCredential | undefined;
      if (str(ac.id)) {
        cred = ks.appCredentials.get(str(ac.id) as string);
        // Keystone looks the credential up by id before checking anything else.
        if (!cred) return `notfound:Could not find Application Credential: ${str(ac.id)}.`;
      } else if (str(ac.name)) {
        const u = isRecord(ac.user) ? ac.user : {};
        const owner = str(u.id) ? ks.users.get(str(u.id) as string) : ks.userByName(str(u.name) ?? '');
        cred = [...ks.appCredentials.values()].find((c) => c.name === ac.name && c.userId === owner?.id);
      }
      if (!cred || !ks.checkSecret(cred, secret)) return UNAUTHENTICATED;
      if (cred.expiresAt && Date.parse(cred.expiresAt) <= now) return UNAUTHENTICATED;
      const user = ks.users.get(cred.userId) as SimUser;
      return ks.issue(user, cred.projectId, ['application_credential'], now, cred);
    }
    if (method === 'token') {
      const tk = isRecord(identity.token) ? str(identity.token.id) : undefined;
      const prev = ks.validate(tk, now);
      if (!prev) return UNAUTHENTICATED;
      const user = ks.users.get(prev.userId) as SimUser;
      const projectId = scopeProject(auth, user) ?? prev.projectId;
      // A token made from a token keeps the original expiry, as Keystone does.
      return ks.issue(
        user,
        projectId,
        [...new Set([...prev.methods, 'token'])],
        now,
        prev.appCredential,
        prev.expiresMs,
      );
    }
    if (method === 'password') {
      const pw =
        isRecord(identity.password) && isRecord(identity.password.user) ? identity.password.user : null;
      if (!pw)
        return 'bad:Expecting to find password in identity. The server could not comply with the request since it is either malformed or otherwise incorrect. The client is assumed to be in error.';
      const user = str(pw.id) ? ks.users.get(str(pw.id) as string) : ks.userByName(str(pw.name) ?? '');
      if (!user || user.password !== str(pw.password)) return UNAUTHENTICATED;
      const projectId = scopeProject(auth, user);
      if (projectId === undefined) return UNAUTHENTICATED;
      if (!user.roles.has(projectId)) return UNAUTHENTICATED;
      return ks.issue(user, projectId, ['password'], now);
    }
    return UNAUTHENTICATED;
  };

  const scopeProject = (auth: Record<string, unknown>, user: SimUser): string | undefined => {
    const scope = isRecord(auth.scope) && isRecord(auth.scope.project) ? auth.scope.project : null;
    if (!scope) return user.roles.keys().next().value;
    if (str(scope.id)) return ks.projects.has(str(scope.id) as string) ? (scope.id as string) : undefined;
    return ks.projectByName(str(scope.name) ?? '')?.id;
  };

  const requireToken = (ctx: Ctx): TokenInfo | null => {
    const t = ks.validate(ctx.req.headers['x-auth-token'] as string | undefined, wallNow());
    if (!t) keystoneError(ctx, 401, UNAUTHENTICATED);
    return t;
  };

  const requireAdmin = (ctx: Ctx, action: string): TokenInfo | null => {
    const t = requireToken(ctx);
    if (t && !t.roles.includes('admin')) {
      keystoneError(ctx, 403, `You are not authorized to perform the requested action: ${action}.`);
      return null;
    }
    return t;
  };

  const appCredView = (ctx: Ctx, c: AppCredential, secret?: string): Record<string, unknown> => ({
    id: c.id,
    name: c.name,
    description: c.description,
    user_id: c.userId,
    project_id: c.projectId,
    system: null,
    roles: c.roles.map((r) => ({
      id: ks.roleIds.get(r) ?? keystoneId('role', r),
      name: r,
      domain_id: null,
      description: null,
      options: { immutable: true },
    })),
    unrestricted: c.unrestricted ? true : null,
    expires_at: c.expiresAt,
    access_rules: c.accessRules,
    ...(secret !== undefined ? { secret } : {}),
    links: { self: `${ctx.origin}${KEYSTONE_PREFIX}/v3/application_credentials/${c.id}` },
  });

  const ownCredUser = (ctx: Ctx, userId: string): TokenInfo | null => {
    const t = requireToken(ctx);
    if (!t) return null;
    if (t.userId !== userId && !t.roles.includes('admin')) {
      keystoneError(
        ctx,
        403,
        'You are not authorized to perform the requested action: identity:list_application_credentials.',
      );
      return null;
    }
    if (t.appCredential && !t.appCredential.unrestricted) {
      keystoneError(
        ctx,
        403,
        "Using method 'application_credential' is not allowed for managing additional application credentials.",
      );
      return null;
    }
    return t;
  };

  return [
    route('GET', '', (ctx) => {
      sendJson(ctx, 300, { versions: { values: [versionDoc(ctx.origin)] } });
    }),
    route('GET', '/v3', (ctx) => {
      sendJson(ctx, 200, { version: versionDoc(ctx.origin) });
    }),
    route('POST', '/v3/auth/tokens', (ctx) => {
      const r = authenticate(ctx);
      if (typeof r === 'string') {
        if (r.startsWith('bad:')) return keystoneError(ctx, 400, r.slice(4));
        if (r.startsWith('notfound:')) return keystoneError(ctx, 404, r.slice(9));
        return keystoneError(ctx, 401, r);
      }
      const nocatalog = ctx.query.has('nocatalog');
      sendJson(ctx, 201, tokenBody(ctx, r, !nocatalog), { 'X-Subject-Token': r.token });
    }),
    route('GET', '/v3/auth/tokens', (ctx) => {
      if (!requireToken(ctx)) return;
      const subjectToken = ctx.req.headers['x-subject-token'] as string | undefined;
      const subject = ks.validate(subjectToken, wallNow());
      if (!subject) {
        return keystoneError(ctx, 404, ks.refusal(subjectToken, wallNow()) ?? 'Could not find token.');
      }
      sendJson(ctx, 200, tokenBody(ctx, subject, !ctx.query.has('nocatalog')), {
        'X-Subject-Token': subject.token,
      });
    }),
    route('DELETE', '/v3/auth/tokens', (ctx) => {
      if (!requireToken(ctx)) return;
      const subject = ctx.req.headers['x-subject-token'] as string | undefined;
      if (!subject || !ks.tokens.delete(subject)) return keystoneError(ctx, 404, 'Could not find token.');
      sendEmpty(ctx, 204);
    }),
    route('GET', '/v3/auth/catalog', (ctx) => {
      const t = requireToken(ctx);
      if (!t) return;
      const body = tokenBody(ctx, t, true).token as Record<string, unknown>;
      sendJson(ctx, 200, {
        catalog: body.catalog,
        links: { self: `${ctx.origin}${KEYSTONE_PREFIX}/v3/auth/catalog` },
      });
    }),
    route('GET', '/v3/users/{id}/application_credentials', (ctx, [userId]) => {
      if (!ownCredUser(ctx, userId as string)) return;
      const name = ctx.query.get('name');
      const list = [...ks.appCredentials.values()].filter(
        (c) => c.userId === userId && (name === null || c.name === name),
      );
      sendJson(ctx, 200, {
        application_credentials: list.map((c) => appCredView(ctx, c)),
        links: {
          self: `${ctx.origin}${KEYSTONE_PREFIX}/v3/users/${userId}/application_credentials`,
          previous: null,
          next: null,
        },
      });
    }),
    route('GET', '/v3/users/{id}/application_credentials/{cid}', (ctx, [userId, credId]) => {
      if (!ownCredUser(ctx, userId as string)) return;
      const c = ks.appCredentials.get(credId as string);
      if (!c || c.userId !== userId)
        return keystoneError(ctx, 404, `Could not find Application Credential: ${credId}.`);
      sendJson(ctx, 200, { application_credential: appCredView(ctx, c) });
    }),
    route('DELETE', '/v3/users/{id}/application_credentials/{cid}', (ctx, [userId, credId]) => {
      if (!ownCredUser(ctx, userId as string)) return;
      const c = ks.appCredentials.get(credId as string);
      if (!c || c.userId !== userId)
        return keystoneError(ctx, 404, `Could not find Application Credential: ${credId}.`);
      // Its tokens stay issued: Keystone refuses them from now on, but services that have
      // them cached (keystonemiddleware) keep accepting them for a while, as in the lab.
      ks.appCredentials.delete(c.id);
      sendEmpty(ctx, 204);
    }),
    route('POST', '/v3/users/{id}/application_credentials', (ctx, [userId]) => {
      const t = ownCredUser(ctx, userId as string);
      if (!t) return;
      const user = ks.users.get(userId as string);
      const body =
        isRecord(ctx.body) && isRecord(ctx.body.application_credential)
          ? ctx.body.application_credential
          : null;
      if (!user || !body || !str(body.name)) {
        return keystoneError(
          ctx,
          400,
          "Invalid input for field 'application_credential': 'name' is a required property",
        );
      }
      if ([...ks.appCredentials.values()].some((c) => c.userId === userId && c.name === body.name)) {
        return keystoneError(
          ctx,
          409,
          'Conflict occurred attempting to store application_credential - Duplicate entry found with name ' +
            String(body.name) +
            '.',
        );
      }
      const wanted = Array.isArray(body.roles)
        ? body.roles.map((r) =>
            isRecord(r) ? (str(r.name) ?? [...ks.roleIds].find(([, id]) => id === r.id)?.[0]) : undefined,
          )
        : t.roles;
      if (wanted.some((r) => r === undefined || !t.roles.includes(r))) {
        return keystoneError(
          ctx,
          400,
          'Application credential roles must be a subset of the roles of the token.',
        );
      }
      const rules: { service: string; method: string; path: string }[] = [];
      if (Array.isArray(body.access_rules)) {
        for (const [i, r] of body.access_rules.entries()) {
          if (!isRecord(r) || !str(r.service) || !str(r.method) || !str(r.path)) {
            return keystoneError(
              ctx,
              400,
              `Invalid input for field 'access_rules/${i}': 'service', 'method' and 'path' are required properties`,
            );
          }
          rules.push({ service: r.service as string, method: r.method as string, path: r.path as string });
        }
      }
      const { cred, secret } = ks.createAppCredential(user, t.projectId, {
        name: body.name as string,
        description: str(body.description) ?? null,
        secret: str(body.secret),
        roles: wanted as string[],
        unrestricted: body.unrestricted === true,
        expiresAt: str(body.expires_at) ?? null,
        accessRules: rules,
      });
      sendJson(ctx, 201, { application_credential: appCredView(ctx, cred, secret) });
    }),
    route('GET', '/v3/projects', (ctx) => {
      const t = requireToken(ctx);
      if (!t) return;
      const name = ctx.query.get('name');
      const list = [...ks.projects.values()].filter(
        (p) => (t.roles.includes('admin') || p.id === t.projectId) && (name === null || p.name === name),
      );
      sendJson(ctx, 200, {
        projects: list.map((p) => projectView(ctx, p.id, p.name)),
        links: { self: `${ctx.origin}${KEYSTONE_PREFIX}/v3/projects`, previous: null, next: null },
      });
    }),
    route('POST', '/v3/projects', (ctx) => {
      if (!requireAdmin(ctx, 'identity:create_project')) return;
      const p = isRecord(ctx.body) && isRecord(ctx.body.project) ? ctx.body.project : null;
      const name = p ? str(p.name) : undefined;
      if (!p || !name) {
        return keystoneError(ctx, 400, "Invalid input for field 'project': 'name' is a required property");
      }
      const domainId = str(p.domain_id) ?? DOMAIN.id;
      if (domainId !== DOMAIN.id) return keystoneError(ctx, 404, `Could not find domain: ${domainId}.`);
      if (ks.projectByName(name)) {
        return keystoneError(
          ctx,
          409,
          `Conflict occurred attempting to store project - it is not permitted to have two projects with the same name in the same domain : ${name}.`,
        );
      }
      const id = keystoneId('project', name, String(ks.projects.size));
      ks.projects.set(id, { id, name });
      sendJson(ctx, 201, { project: projectView(ctx, id, name) });
    }),
    route('DELETE', '/v3/projects/{id}', (ctx, [id]) => {
      if (!requireAdmin(ctx, 'identity:delete_project')) return;
      if (!ks.projects.has(id as string)) return keystoneError(ctx, 404, `Could not find project: ${id}.`);
      ks.deleteProject(id as string);
      sendEmpty(ctx, 204);
    }),
    route('GET', '/v3/roles', (ctx) => {
      if (!requireToken(ctx)) return;
      const name = ctx.query.get('name');
      const roles = [...ks.roleIds].filter(([n]) => name === null || n === name);
      sendJson(ctx, 200, {
        roles: roles.map(([n, id]) => ({
          id,
          name: n,
          domain_id: null,
          description: null,
          options: {},
          links: { self: `${ctx.origin}${KEYSTONE_PREFIX}/v3/roles/${id}` },
        })),
        links: { self: `${ctx.origin}${KEYSTONE_PREFIX}/v3/roles`, previous: null, next: null },
      });
    }),
    route('PUT', '/v3/projects/{id}/users/{uid}/roles/{rid}', (ctx, [id, uid, rid]) => {
      if (!requireAdmin(ctx, 'identity:create_grant')) return;
      const role = [...ks.roleIds].find(([, x]) => x === rid)?.[0];
      const user = ks.users.get(uid as string);
      if (!ks.projects.has(id as string)) return keystoneError(ctx, 404, `Could not find project: ${id}.`);
      if (!user) return keystoneError(ctx, 404, `Could not find user: ${uid}.`);
      if (!role) return keystoneError(ctx, 404, `Could not find role: ${rid}.`);
      const held = user.roles.get(id as string) ?? [];
      if (!held.includes(role)) user.roles.set(id as string, [...held, role]);
      sendEmpty(ctx, 204);
    }),
    route('GET', '/v3/role_assignments', (ctx) => {
      if (!requireAdmin(ctx, 'identity:list_role_assignments')) return;
      const project = ctx.query.get('scope.project.id');
      const userId = ctx.query.get('user.id');
      const out: Record<string, unknown>[] = [];
      for (const u of ks.users.values()) {
        if (userId !== null && u.id !== userId) continue;
        for (const [p, roles] of u.roles) {
          if (project !== null && p !== project) continue;
          for (const r of roles)
            out.push({
              role: { id: ks.roleIds.get(r) ?? r },
              user: { id: u.id },
              scope: { project: { id: p } },
              links: {
                assignment: `${ctx.origin}${KEYSTONE_PREFIX}/v3/projects/${p}/users/${u.id}/roles/${ks.roleIds.get(r) ?? r}`,
              },
            });
        }
      }
      sendJson(ctx, 200, {
        role_assignments: out,
        links: { self: `${ctx.origin}${KEYSTONE_PREFIX}/v3/role_assignments`, previous: null, next: null },
      });
    }),
    route('GET', '/v3/projects/{id}', (ctx, [id]) => {
      if (!requireToken(ctx)) return;
      const p = ks.projects.get(id as string) ?? ks.projectByName(id as string);
      if (!p) return keystoneError(ctx, 404, `Could not find project: ${id}.`);
      sendJson(ctx, 200, { project: projectView(ctx, p.id, p.name) });
    }),
  ];
}

function projectView(ctx: Ctx, id: string, name: string): Record<string, unknown> {
  return {
    id,
    name,
    domain_id: DOMAIN.id,
    description: '',
    enabled: true,
    parent_id: DOMAIN.id,
    is_domain: false,
    tags: [],
    options: {},
    links: { self: `${ctx.origin}${KEYSTONE_PREFIX}/v3/projects/${id}` },
  };
}
