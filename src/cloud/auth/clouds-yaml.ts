// Reads a cloud's settings the way the OpenStack tools do: clouds.yaml (and secure.yaml) from
// OS_CLIENT_CONFIG_FILE, ./, ~/.config/openstack/ or /etc/openstack/, selected by name or
// OS_CLOUD; without a cloud name, the OS_* variables of an openrc.
import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { CloudError } from '../errors.js';
import type { AuthMethod, AuthSettings, CloudConfig, EndpointInterface } from './config.js';

export interface LoadCloudOptions {
  /** Cloud name; defaults to OS_CLOUD. */
  cloud?: string;
  env?: Record<string, string | undefined>;
  cwd?: string;
  home?: string;
  /** Overrides the search list of clouds.yaml paths (tests). */
  searchPaths?: string[];
}

export function cloudsYamlSearchPaths(
  env: Record<string, string | undefined>,
  cwd: string,
  home: string,
): { clouds: string[]; secure: string[] } {
  const dirs = [cwd, join(home, '.config', 'openstack'), '/etc/openstack'];
  const clouds = dirs.flatMap((d) => [join(d, 'clouds.yaml'), join(d, 'clouds.yml')]);
  const secure = dirs.flatMap((d) => [join(d, 'secure.yaml'), join(d, 'secure.yml')]);
  if (env.OS_CLIENT_CONFIG_FILE) clouds.unshift(resolve(cwd, env.OS_CLIENT_CONFIG_FILE));
  return { clouds, secure };
}

async function readFirst(paths: string[]): Promise<{ path: string; doc: unknown } | undefined> {
  for (const path of paths) {
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch {
      continue;
    }
    try {
      return { path, doc: parseYaml(text) };
    } catch (e) {
      throw new CloudError('config', `${path}: not valid YAML (${(e as Error).message})`, {
        fix: 'Fix the file or point OS_CLIENT_CONFIG_FILE at another one',
      });
    }
  }
  return undefined;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function str(v: unknown): string | undefined {
  if (typeof v === 'string' && v !== '') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return undefined;
}

function deepMerge(a: Record<string, unknown>, b: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...a };
  for (const [k, v] of Object.entries(b)) {
    const prev = out[k];
    out[k] = isRecord(prev) && isRecord(v) ? deepMerge(prev, v) : v;
  }
  return out;
}

function methodFrom(authType: string | undefined, auth: AuthSettings, where: string): AuthMethod {
  const t = (authType ?? '').toLowerCase();
  if (t === 'v3applicationcredential' || t === 'applicationcredential' || t === 'v3oidcapplicationcredential')
    return 'application-credential';
  if (t === 'token' || t === 'v3token' || t === 'admin_token') return 'token';
  if (t === 'password' || t === 'v3password') return 'password';
  if (t !== '') {
    throw new CloudError('config', `${where}: auth_type "${authType}" is not supported`, {
      fix: 'Use password, v3applicationcredential or token',
    });
  }
  if (auth.applicationCredentialId || auth.applicationCredentialName) return 'application-credential';
  if (auth.token && !auth.password) return 'token';
  return 'password';
}

function interfaceFrom(v: string | undefined, where: string): EndpointInterface {
  const i = (v ?? 'public').toLowerCase().replace(/URL$/i, '');
  if (i === 'public' || i === 'internal' || i === 'admin') return i;
  throw new CloudError('config', `${where}: interface "${v}" is not one of public, internal, admin`, {
    fix: 'Set OS_INTERFACE (or interface: in clouds.yaml) to public, internal or admin',
  });
}

function boolFrom(v: unknown): boolean {
  if (typeof v === 'boolean') return v;
  return typeof v === 'string' && /^(1|true|yes|on)$/i.test(v);
}

function validate(cfg: CloudConfig): CloudConfig {
  const where = cfg.origin;
  const need = (ok: boolean, what: string, fix: string) => {
    if (!ok) throw new CloudError('config', `${where}: ${what}`, { fix });
  };
  need(!!cfg.auth.authUrl, 'no auth URL', 'Set OS_AUTH_URL (or auth.auth_url in clouds.yaml)');
  if (cfg.method === 'password') {
    need(
      !!(cfg.auth.username || cfg.auth.userId),
      'password auth without a user',
      'Set OS_USERNAME (or auth.username)',
    );
    need(!!cfg.auth.password, 'password auth without a password', 'Set OS_PASSWORD (or auth.password)');
  }
  if (cfg.method === 'application-credential') {
    need(
      !!cfg.auth.applicationCredentialSecret,
      'application credential without a secret',
      'Set OS_APPLICATION_CREDENTIAL_SECRET (or auth.application_credential_secret)',
    );
    need(
      !!(cfg.auth.applicationCredentialId || (cfg.auth.applicationCredentialName && cfg.auth.username)),
      'application credential without an id',
      'Set OS_APPLICATION_CREDENTIAL_ID (or auth.application_credential_id)',
    );
  }
  if (cfg.method === 'token') need(!!cfg.auth.token, 'token auth without a token', 'Set OS_TOKEN');
  return cfg;
}

/** The settings of one clouds.yaml entry (already merged with secure.yaml). */
export function cloudFromYamlEntry(name: string, entry: unknown, origin: string): CloudConfig {
  if (!isRecord(entry)) throw new CloudError('config', `${origin}: clouds.${name} is not a mapping`);
  const a = isRecord(entry.auth) ? entry.auth : {};
  const auth: AuthSettings = { authUrl: str(a.auth_url) ?? '' };
  const set = (k: keyof AuthSettings, v: unknown) => {
    const s = str(v);
    if (s !== undefined) auth[k] = s;
  };
  set('username', a.username);
  set('userId', a.user_id);
  set('password', a.password);
  set('userDomainName', a.user_domain_name ?? a.domain_name);
  set('userDomainId', a.user_domain_id ?? a.domain_id);
  set('projectName', a.project_name ?? a.tenant_name);
  set('projectId', a.project_id ?? a.tenant_id);
  set('projectDomainName', a.project_domain_name ?? a.domain_name);
  set('projectDomainId', a.project_domain_id ?? a.domain_id);
  set('applicationCredentialId', a.application_credential_id);
  set('applicationCredentialName', a.application_credential_name);
  set('applicationCredentialSecret', a.application_credential_secret);
  set('token', a.token);
  const cfg: CloudConfig = {
    name,
    method: methodFrom(str(entry.auth_type), auth, origin),
    auth,
    interface: interfaceFrom(str(entry.interface ?? entry.endpoint_type), origin),
    insecure: boolFrom(entry.insecure) || entry.verify === false,
    origin,
  };
  const region = str(entry.region_name) ?? (Array.isArray(entry.regions) ? str(entry.regions[0]) : undefined);
  if (region) cfg.regionName = region;
  const cacert = str(entry.cacert);
  if (cacert) cfg.cacert = cacert;
  return validate(cfg);
}

/** The settings given by OS_* variables (an openrc). */
export function cloudFromEnv(env: Record<string, string | undefined>): CloudConfig {
  const e = (k: string) => (env[k] === '' ? undefined : env[k]);
  const auth: AuthSettings = { authUrl: e('OS_AUTH_URL') ?? '' };
  const pairs: [keyof AuthSettings, string][] = [
    ['username', 'OS_USERNAME'],
    ['userId', 'OS_USER_ID'],
    ['password', 'OS_PASSWORD'],
    ['userDomainName', 'OS_USER_DOMAIN_NAME'],
    ['userDomainId', 'OS_USER_DOMAIN_ID'],
    ['projectName', 'OS_PROJECT_NAME'],
    ['projectId', 'OS_PROJECT_ID'],
    ['projectDomainName', 'OS_PROJECT_DOMAIN_NAME'],
    ['projectDomainId', 'OS_PROJECT_DOMAIN_ID'],
    ['applicationCredentialId', 'OS_APPLICATION_CREDENTIAL_ID'],
    ['applicationCredentialName', 'OS_APPLICATION_CREDENTIAL_NAME'],
    ['applicationCredentialSecret', 'OS_APPLICATION_CREDENTIAL_SECRET'],
    ['token', 'OS_TOKEN'],
  ];
  for (const [k, v] of pairs) {
    const val = e(v);
    if (val !== undefined) auth[k] = val;
  }
  if (!auth.projectName && e('OS_TENANT_NAME')) auth.projectName = e('OS_TENANT_NAME');
  if (!auth.projectId && e('OS_TENANT_ID')) auth.projectId = e('OS_TENANT_ID');
  const origin = 'OS_* environment variables';
  if (!auth.authUrl) {
    throw new CloudError(
      'config',
      'no cloud configured: OS_AUTH_URL is not set and no cloud name was given',
      {
        fix: 'Source an openrc, or pass --cloud NAME / set OS_CLOUD to an entry of clouds.yaml',
      },
    );
  }
  const cfg: CloudConfig = {
    name: 'env',
    method: methodFrom(e('OS_AUTH_TYPE'), auth, origin),
    auth,
    interface: interfaceFrom(e('OS_INTERFACE') ?? e('OS_ENDPOINT_TYPE'), origin),
    insecure: boolFrom(e('OS_INSECURE')),
    origin,
  };
  const region = e('OS_REGION_NAME');
  if (region) cfg.regionName = region;
  const cacert = e('OS_CACERT');
  if (cacert) cfg.cacert = cacert;
  return validate(cfg);
}

/**
 * Resolves the cloud to talk to: the named cloud (option or OS_CLOUD) from the first
 * clouds.yaml found, merged with secure.yaml; otherwise the OS_* variables.
 */
export async function loadCloudConfig(opts: LoadCloudOptions = {}): Promise<CloudConfig> {
  const env = opts.env ?? process.env;
  const name = opts.cloud ?? (env.OS_CLOUD || undefined);
  if (!name) return cloudFromEnv(env);
  const cwd = opts.cwd ?? process.cwd();
  const paths = cloudsYamlSearchPaths(env, cwd, opts.home ?? homedir());
  const cloudsPaths = opts.searchPaths ?? paths.clouds;
  const found = await readFirst(cloudsPaths);
  if (!found) {
    throw new CloudError('config', `cloud "${name}" was asked for but no clouds.yaml was found`, {
      fix: `Create one of ${cloudsPaths.join(', ')} or set OS_CLIENT_CONFIG_FILE`,
    });
  }
  const clouds = isRecord(found.doc) && isRecord(found.doc.clouds) ? found.doc.clouds : undefined;
  if (!clouds) throw new CloudError('config', `${found.path}: no top-level "clouds" mapping`);
  let entry = clouds[name];
  if (entry === undefined) {
    throw new CloudError('config', `${found.path}: no cloud named "${name}"`, {
      fix: `Known clouds: ${Object.keys(clouds).join(', ') || '(none)'}`,
    });
  }
  const secureDir = found.path.replace(/clouds\.ya?ml$/, '');
  const secure = await readFirst(
    opts.searchPaths ? [join(secureDir, 'secure.yaml'), join(secureDir, 'secure.yml')] : paths.secure,
  );
  const secureClouds = secure && isRecord(secure.doc) && isRecord(secure.doc.clouds) ? secure.doc.clouds : {};
  const secureEntry = secureClouds[name];
  if (isRecord(entry) && isRecord(secureEntry)) entry = deepMerge(entry, secureEntry);
  return cloudFromYamlEntry(name, entry, `${found.path} (cloud ${name})`);
}
