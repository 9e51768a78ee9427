// Microversion negotiation: use the newest version we were written for that the cloud
// supports, and refuse clearly when the cloud cannot give what we need.
import { CloudError } from '../errors.js';

export type Version = readonly [number, number];

export function parseVersion(s: string): Version | undefined {
  const m = /^v?(\d+)\.(\d+)$/.exec(s.trim());
  return m ? [Number(m[1]), Number(m[2])] : undefined;
}

export function compareVersions(a: Version, b: Version): number {
  return a[0] !== b[0] ? a[0] - b[0] : a[1] - b[1];
}

export const formatVersion = (v: Version): string => `${v[0]}.${v[1]}`;

export interface VersionRange {
  min: Version;
  max: Version;
}

/**
 * Reads the supported range from a version document: Nova's `{"version": {...}}` on a versioned
 * endpoint, or `{"versions": [...]}` (Placement, or an unversioned root). `major` picks the entry.
 */
export function versionRangeFromDocument(doc: unknown, major: number): VersionRange | undefined {
  if (!doc || typeof doc !== 'object') return undefined;
  const rec = doc as Record<string, unknown>;
  const entries: unknown[] = Array.isArray(rec.versions) ? rec.versions : rec.version ? [rec.version] : [];
  let best: VersionRange | undefined;
  for (const e of entries) {
    if (!e || typeof e !== 'object') continue;
    const v = e as Record<string, unknown>;
    const max = parseVersion(String(v.max_version ?? v.version ?? ''));
    const min = parseVersion(String(v.min_version ?? ''));
    if (!max || !min || max[0] !== major) continue;
    if (!best || compareVersions(max, best.max) > 0) best = { min, max };
  }
  return best;
}

/** min(cloud max, wanted), or a clear error when the cloud max is below what is needed. */
export function negotiateVersion(
  service: string,
  range: VersionRange | undefined,
  need: Version,
  want: Version,
  where: string,
): Version {
  if (!range) {
    throw new CloudError('microversion', `${service} at ${where} publishes no microversion range`, {
      fix: `Aicerine needs ${service} microversion ${formatVersion(need)} or later; check that the endpoint in the catalog is the versioned ${service} API`,
    });
  }
  if (compareVersions(range.max, need) < 0) {
    throw new CloudError(
      'microversion',
      `${service} at ${where} supports microversions up to ${formatVersion(range.max)}, Aicerine needs ${formatVersion(need)} or later`,
      { fix: `Upgrade ${service} (or use an endpoint of a newer release)` },
    );
  }
  const chosen = compareVersions(range.max, want) < 0 ? range.max : want;
  if (compareVersions(chosen, range.min) < 0) {
    throw new CloudError(
      'microversion',
      `${service} at ${where} no longer supports microversion ${formatVersion(chosen)} (minimum ${formatVersion(range.min)})`,
      { fix: 'Upgrade Aicerine' },
    );
  }
  return chosen;
}
