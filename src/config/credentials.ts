// From a credential reference in the configuration to what openSession needs: the same
// lookup as every command (clouds.yaml by name, or OS_CLOUD / OS_* variables); and from a
// secret reference to the secret.
import { readFile } from 'node:fs/promises';
import type { SessionOptions } from '../cloud/session.js';
import type { CredentialRef, SecretSource } from './types.js';

export function sessionSourceFor(ref: CredentialRef): Pick<SessionOptions, 'config' | 'load'> {
  if (ref.kind === 'clouds-yaml') return { load: { cloud: ref.cloud } };
  if (ref.kind === 'inline') return { config: ref.config };
  return {};
}

/**
 * The secret itself, read when the store or the broker connects (never at load, so a
 * rotated password file is picked up on reconnect). Errors name the source, never the value.
 */
export async function readSecret(
  source: SecretSource,
  env: Record<string, string | undefined> = process.env,
): Promise<string> {
  if (source.kind === 'inline') return source.value;
  if (source.kind === 'env') {
    const v = env[source.variable];
    if (v === undefined || v === '') throw new Error(`password variable ${source.variable} is not set`);
    return v;
  }
  let text: string;
  try {
    text = await readFile(source.path, 'utf8');
  } catch (e) {
    throw new Error(
      `password file ${source.path} cannot be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`,
    );
  }
  const line = text.split(/\r?\n/)[0] ?? '';
  if (line === '') throw new Error(`password file ${source.path} is empty`);
  return line;
}
