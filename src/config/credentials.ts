// From a credential reference in the configuration to what openSession needs: the same
// lookup as every command (clouds.yaml by name, or OS_CLOUD / OS_* variables); and from a
// secret reference to the secret.
import { readFile } from 'node:fs/promises';
import type { SessionOptions } from '../cloud/session.js';
import type { CredentialRef, SecretSource } from './types.js';

/**
 * The openSession options for a credential reference. An application credential's secret is
 * read here, when the session opens, from where the operator keeps it.
 */
export async function sessionSourceFor(
  ref: CredentialRef,
  env: Record<string, string | undefined> = process.env,
): Promise<Pick<SessionOptions, 'config' | 'load'>> {
  if (ref.kind === 'clouds-yaml') return { load: { cloud: ref.cloud } };
  if (ref.kind === 'inline') return { config: ref.config };
  if (ref.kind === 'application-credential') {
    return {
      config: {
        name: `application credential ${ref.id}`,
        method: 'application-credential',
        auth: {
          authUrl: ref.authUrl,
          applicationCredentialId: ref.id,
          applicationCredentialSecret: await readSecret(ref.secret, env, `${ref.origin} secret`),
        },
        interface: ref.interface ?? 'public',
        ...(ref.regionName ? { regionName: ref.regionName } : {}),
        ...(ref.cacert ? { cacert: ref.cacert } : {}),
        insecure: false,
        origin: ref.origin,
      },
    };
  }
  return {};
}

/** How a credential is named in logs and the audit log: its role and its source, never its secret. */
export function credentialLabel(kind: string, ref: CredentialRef): string {
  switch (ref.kind) {
    case 'clouds-yaml':
      return `${kind} (cloud ${ref.cloud})`;
    case 'application-credential':
      return `${kind} (application credential ${ref.id})`;
    case 'inline':
      return `${kind} (inline)`;
    case 'environment':
      return `${kind} (OS_* environment)`;
  }
}

/**
 * The secret itself, read when the store or the broker connects (never at load, so a
 * rotated password file is picked up on reconnect). Errors name the source, never the value.
 */
export async function readSecret(
  source: SecretSource,
  env: Record<string, string | undefined> = process.env,
  what = 'password',
): Promise<string> {
  if (source.kind === 'inline') return source.value;
  if (source.kind === 'env') {
    const v = env[source.variable];
    if (v === undefined || v === '') throw new Error(`${what} variable ${source.variable} is not set`);
    return v;
  }
  let text: string;
  try {
    text = await readFile(source.path, 'utf8');
  } catch (e) {
    throw new Error(
      `${what} file ${source.path} cannot be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`,
    );
  }
  const line = text.split(/\r?\n/)[0] ?? '';
  if (line === '') throw new Error(`${what} file ${source.path} is empty`);
  return line;
}
