// What a batch's dedicated resources are called: the configured names plus the batch id, so
// two batches never share a project, aggregate, trait or flavor, and a clean-up finds exactly
// its own batch's leftovers by name.
import type { ValidationSettings } from './settings.js';

export interface BatchNames {
  project: string;
  aggregate: string;
  trait: string;
  flavor: string;
  /** The canary of one host. */
  canary(host: string): string;
}

/** Prefix of the Nova disabled reason a validation writes, so operators and tools recognise it. */
export const VALIDATION_REASON_PREFIX = 'aicerine-validate:';

/** Nova keeps at most 255 characters of a disabled reason. */
export function disabledReason(text: string): string {
  const full = `${VALIDATION_REASON_PREFIX} ${text.replace(/\s+/g, ' ').trim()}`;
  return full.length > 255 ? `${full.slice(0, 254)}…` : full;
}

export function batchNames(
  s: Pick<ValidationSettings, 'projectName' | 'aggregateName' | 'traitName'>,
  batch: string,
): BatchNames {
  const id = batch.replace(/[^A-Za-z0-9-]/g, '-');
  const traitId = batch.toUpperCase().replace(/[^A-Z0-9]/g, '_');
  const project = `${s.projectName}-${id}`;
  return {
    project,
    aggregate: `${s.aggregateName}-${id}`,
    trait: `${s.traitName}_${traitId}`,
    flavor: `${project}-canary`,
    canary: (host) => `${project}-${host}`,
  };
}
