// From a credential reference in the configuration to what openSession needs: the same
// lookup as every command (clouds.yaml by name, or OS_CLOUD / OS_* variables).
import type { SessionOptions } from '../cloud/session.js';
import type { CredentialRef } from './types.js';

export function sessionSourceFor(ref: CredentialRef): Pick<SessionOptions, 'config' | 'load'> {
  if (ref.kind === 'clouds-yaml') return { load: { cloud: ref.cloud } };
  if (ref.kind === 'inline') return { config: ref.config };
  return {};
}
