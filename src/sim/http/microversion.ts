// OpenStack API microversions as Nova and Placement parse them (OpenStack-API-Version header,
// and Nova's legacy X-OpenStack-Nova-API-Version).

export type Version = readonly [number, number];

export interface VersionRange {
  min: Version;
  max: Version;
}

export const NOVA_VERSIONS: VersionRange = { min: [2, 1], max: [2, 93] };
export const PLACEMENT_VERSIONS: VersionRange = { min: [1, 0], max: [1, 39] };

export function fmt(v: Version): string {
  return `${v[0]}.${v[1]}`;
}

export function atLeast(v: Version, major: number, minor: number): boolean {
  return v[0] > major || (v[0] === major && v[1] >= minor);
}

function cmp(a: Version, b: Version): number {
  return a[0] - b[0] || a[1] - b[1];
}

export type Negotiated = { ok: true; version: Version } | { ok: false; status: 400 | 406; message: string };

/**
 * The version a request asks for. `serviceType` is the token in "OpenStack-API-Version:
 * <service> X.Y"; `legacy` is Nova's old header value.
 */
export function requestedVersion(
  range: VersionRange,
  serviceType: string,
  header: string | undefined,
  legacy: string | undefined,
): Negotiated {
  let raw: string | undefined;
  if (header) {
    for (const part of header.split(',')) {
      const [svc, ver] = part.trim().split(/\s+/);
      if (svc?.toLowerCase() === serviceType && ver) raw = ver;
    }
  }
  raw = raw ?? legacy?.trim();
  if (!raw) return { ok: true, version: range.min };
  if (raw.toLowerCase() === 'latest') return { ok: true, version: range.max };
  const m = /^([1-9]\d*)\.(0|[1-9]\d*)$/.exec(raw);
  if (!m) {
    return {
      ok: false,
      status: 400,
      message: `API Version String ${raw} is of invalid format. Must be of format MajorNum.MinorNum.`,
    };
  }
  const v: Version = [Number(m[1]), Number(m[2])];
  if (cmp(v, range.min) < 0 || cmp(v, range.max) > 0) {
    return {
      ok: false,
      status: 406,
      message: `Version ${fmt(v)} is not supported by the API. Minimum is ${fmt(range.min)} and maximum is ${fmt(range.max)}.`,
    };
  }
  return { ok: true, version: v };
}
