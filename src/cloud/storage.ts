// Whether a server's disk is on shared storage (live migration without copying the disk).
// Nova's API does not say where an ephemeral disk lives, so the operator declares it, in the
// cloud (aggregate metadata, flavor extra spec) or in Aicerine's settings; volume-backed
// servers are shared by construction. Undeclared means local: out of scope, never moved.
import { z } from 'zod';
import { InputError } from '../errors.js';
import { toInputIssues } from '../formats/schema-helpers.js';

export const SHARED_STORAGE_KEY = 'aicerine:shared_storage';

export type StorageKind = 'shared' | 'local';

export interface StoragePolicy {
  /** For servers nothing else decides. */
  default: StorageKind;
  /** Per aggregate name, below what the cloud's own metadata says. */
  aggregates?: Record<string, StorageKind>;
}

export const DEFAULT_STORAGE_POLICY: StoragePolicy = { default: 'local' };

export interface StorageDecision {
  shared: boolean;
  /** Which rule decided, for `check` and for reviewers of a plan. */
  because: string;
}

function parseFlag(v: string | undefined): boolean | undefined {
  if (v === undefined) return undefined;
  if (/^(true|yes|1|shared)$/i.test(v)) return true;
  if (/^(false|no|0|local)$/i.test(v)) return false;
  return undefined;
}

export function decideStorage(
  server: { imageId: string | null; flavorExtraSpecs: Record<string, string> },
  hostAggregates: { name: string; metadata: Record<string, string> }[],
  policy: StoragePolicy,
): StorageDecision {
  if (server.imageId === null) return { shared: true, because: 'boots from a volume' };
  const flavor = parseFlag(server.flavorExtraSpecs[SHARED_STORAGE_KEY]);
  if (flavor !== undefined) return { shared: flavor, because: `flavor extra spec ${SHARED_STORAGE_KEY}` };
  for (const a of hostAggregates) {
    const v = parseFlag(a.metadata[SHARED_STORAGE_KEY]);
    if (v !== undefined) return { shared: v, because: `aggregate ${a.name} metadata ${SHARED_STORAGE_KEY}` };
  }
  for (const a of hostAggregates) {
    const v = policy.aggregates?.[a.name];
    if (v !== undefined) return { shared: v === 'shared', because: `storage policy for aggregate ${a.name}` };
  }
  return { shared: policy.default === 'shared', because: `storage policy default (${policy.default})` };
}

const kind = z.enum(['shared', 'local'], { error: 'expected "shared" or "local"' });
const storageSchema = z.object({ default: kind, aggregates: z.record(z.string(), kind).optional() });

export function parseStoragePolicy(doc: unknown, file?: string): StoragePolicy {
  const r = storageSchema.safeParse(doc);
  if (!r.success) throw new InputError(toInputIssues(r.error, doc, file));
  return r.data.aggregates
    ? { default: r.data.default, aggregates: r.data.aggregates }
    : { default: r.data.default };
}
