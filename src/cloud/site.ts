// What an operator declares about the site that no API shows: maintenance windows, the
// allocation-ratio bounds Aicerine may move within, whether nova.conf pins the ratios, and
// where disks live. Read by `check` and `record`. The service configuration (src/config)
// declares the same things per aggregate; this older standalone form stays readable.
import { z } from 'zod';
import { parseWindow, type WeeklyWindow, WINDOW_GRAMMAR, windowFromParts } from '../config/windows.js';
import { knownZone } from '../config/zone.js';
import { InputError } from '../errors.js';
import { toInputIssues } from '../formats/schema-helpers.js';
import type { StoragePolicy } from './storage.js';

export interface RatioBound {
  min: number;
  max: number;
}

export interface AggregateDeclarations {
  maintenanceWindows?: WeeklyWindow[];
  ratioBounds?: Record<string, RatioBound>;
  /** true when nova.conf on these hosts sets cpu_allocation_ratio (nova-compute then rewrites Placement). */
  cpuAllocationRatioInNovaConf?: boolean;
  ramAllocationRatioInNovaConf?: boolean;
}

export interface SiteDeclarations {
  /** Applies to every aggregate, below its own entry. */
  defaults: AggregateDeclarations;
  aggregates: Record<string, AggregateDeclarations>;
  storage?: StoragePolicy;
}

const DAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;
const hhmm = z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'expected HH:MM (24 h)');
const minutes = (t: string) => Number(t.slice(0, 2)) * 60 + Number(t.slice(3));
// The older object form: each listed day, start to end (crossing midnight when end <= start).
const windowObject = z
  .object({
    days: z
      .array(z.enum(DAYS, { error: `expected one of ${DAYS.join(', ')}` }))
      .min(1, 'expected at least one day'),
    start: hhmm,
    end: hhmm,
    timezone: z
      .string()
      .refine((t) => knownZone(t) !== undefined, {
        error: 'unknown time zone (expected an IANA name such as Europe/Paris, or UTC)',
      })
      .optional(),
  })
  .transform((w) =>
    windowFromParts(
      w.days.map((d) => DAYS.indexOf(d)),
      minutes(w.start),
      minutes(w.end),
      w.timezone ?? 'UTC',
    ),
  );
// The form shared with the service configuration: "Sat 22:00 - Sun 06:00 Europe/Paris".
const windowText = z.string().transform((s, ctx): WeeklyWindow => {
  const r = parseWindow(s);
  if (!r.ok) {
    ctx.addIssue({ code: 'custom', message: r.error, input: s });
    return z.NEVER;
  }
  return r.window;
});
const windowSchema = z.unknown().transform((v, ctx): WeeklyWindow => {
  const r = (typeof v === 'string' ? windowText : windowObject).safeParse(v);
  if (r.success) return r.data;
  for (const issue of r.error.issues) {
    const message =
      issue.code === 'invalid_type' && issue.path.length === 0
        ? `expected a window: ${WINDOW_GRAMMAR}`
        : issue.message;
    ctx.addIssue({ code: 'custom', message, path: issue.path, input: v });
  }
  return z.NEVER;
});
const boundSchema = z
  .object({
    min: z.number().positive('expected a positive ratio'),
    max: z.number().positive('expected a positive ratio'),
  })
  .refine((b) => b.min <= b.max, 'min is above max');
const declSchema = z.object({
  maintenanceWindows: z.array(windowSchema).optional(),
  ratioBounds: z.record(z.string(), boundSchema).optional(),
  cpuAllocationRatioInNovaConf: z.boolean().optional(),
  ramAllocationRatioInNovaConf: z.boolean().optional(),
});
const storageKind = z.enum(['shared', 'local'], { error: 'expected "shared" or "local"' });
const siteSchema = z.object({
  defaults: declSchema.optional(),
  aggregates: z.record(z.string(), declSchema).optional(),
  storage: z
    .object({ default: storageKind, aggregates: z.record(z.string(), storageKind).optional() })
    .optional(),
});

function clean<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}

export function parseSiteDeclarations(doc: unknown, file?: string): SiteDeclarations {
  const r = siteSchema.safeParse(doc ?? {});
  if (!r.success) throw new InputError(toInputIssues(r.error, doc, file));
  const out: SiteDeclarations = {
    defaults: clean(r.data.defaults ?? {}) as AggregateDeclarations,
    aggregates: Object.fromEntries(
      Object.entries(r.data.aggregates ?? {}).map(([k, v]) => [k, clean(v) as AggregateDeclarations]),
    ),
  };
  if (r.data.storage) out.storage = clean(r.data.storage) as StoragePolicy;
  return out;
}

/** An aggregate's declarations: its own entry over the defaults. */
export function declarationsFor(
  site: SiteDeclarations | undefined,
  aggregate: string,
): AggregateDeclarations {
  return { ...(site?.defaults ?? {}), ...(site?.aggregates[aggregate] ?? {}) };
}
