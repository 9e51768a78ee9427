// A user's policy file (YAML or JSON): validated strictly (an unknown key is a typo, not a
// wish), merged over DEFAULT_POLICY, and compiled into the Policy the planner reads.
import { z } from 'zod';
import { InputError } from '../errors.js';
import { nonEmpty, nonNeg, nonNegInt, posInt, positive, toInputIssues } from '../formats/schema-helpers.js';
import { readTextFile } from '../formats/text-file.js';
import { DEFAULT_POLICY } from './defaults.js';
import { THRESHOLD_LEVELS, type ThresholdLevel, thresholdOfLevel } from './threshold.js';
import { LOAD_SOURCES, POLICY_MODES, type Policy } from './types.js';

const dimension = z.strictObject({
  name: nonEmpty(),
  weight: nonNeg(),
  load: nonEmpty().optional(),
  capacity: nonEmpty().optional(),
  missingServerLoad: z.enum(['zero', 'flavor-vcpus', 'flavor-ram', 'flavor-disk']).optional(),
});

const userPolicy = z.strictObject({
  mode: z.enum(POLICY_MODES).optional(),
  dimensions: z.array(dimension).min(1, { error: 'expected at least one dimension' }).optional(),
  aggregates: z.array(nonEmpty()).optional(),
  budget: z.strictObject({ maxMoves: nonNegInt().optional() }).optional(),
  concurrency: z
    .strictObject({ perHostOutgoing: posInt().optional(), global: posInt().optional() })
    .optional(),
  spread: z.strictObject({ targetImbalance: nonNeg().optional() }).optional(),
  pack: z
    .strictObject({
      spareHosts: nonNegInt().optional(),
      maxFill: positive().max(1, { error: 'expected a fraction in (0, 1]' }).optional(),
      partialDrainMaxPinned: nonNeg().max(1, { error: 'expected a fraction in [0, 1]' }).optional(),
    })
    .optional(),
  minGain: nonNeg().optional(),
  migrationCostPerSecond: nonNeg().optional(),
  threshold: z
    .union(
      [
        z.literal([...THRESHOLD_LEVELS]),
        z.strictObject({ perMove: nonNeg(), perMinute: nonNeg(), perGiB: nonNeg() }),
      ],
      { error: 'expected a level 1..5 or { perMove, perMinute, perGiB }' },
    )
    .optional(),
  load: z.enum(LOAD_SOURCES).optional(),
  forecast: z
    .strictObject({
      // A week: past it the horizon meets the same hours of the week again.
      horizonHours: posInt().max(168, { error: 'expected at most 168 (a week)' }).optional(),
      peakSlots: posInt().optional(),
      maxError: nonNeg().max(1, { error: 'expected a fraction in [0, 1]' }).optional(),
    })
    .optional(),
  hotThreshold: positive().max(1, { error: 'expected a fraction in (0, 1]' }).optional(),
  softGroupPenalty: nonNeg().optional(),
  planner: z.strictObject({ timeLimitMs: nonNeg().optional() }).optional(),
  costModel: z
    .strictObject({
      bandwidthMBps: positive().optional(),
      defaultDirtyRateMBps: nonNeg().optional(),
      overheadSeconds: nonNeg().optional(),
      stopCopyThresholdMB: positive().optional(),
      maxIterations: posInt().optional(),
      learned: z
        .strictObject({
          intercept: nonNeg(),
          secondsPerGiB: nonNeg(),
          secondsPerGiBPerDirtyMBps: nonNeg().optional(),
        })
        .optional(),
    })
    .optional(),
});

// Well-known dimension names get their load key and capacity class without spelling them out.
const KNOWN_DIMENSIONS: Record<
  string,
  Pick<Policy['dimensions'][number], 'load' | 'capacity' | 'missingServerLoad'>
> = {
  cpu: { load: 'cpu', capacity: 'VCPU', missingServerLoad: 'zero' },
  memory: { load: 'memoryMB', capacity: 'MEMORY_MB', missingServerLoad: 'flavor-ram' },
  disk: { load: 'diskGB', capacity: 'DISK_GB', missingServerLoad: 'flavor-disk' },
};

export function compilePolicy(doc: unknown, file?: string): Policy {
  const input = doc ?? {};
  const result = userPolicy.safeParse(input, { reportInput: true });
  if (!result.success) throw new InputError(toInputIssues(result.error, input, file));
  const u = result.data;
  const d = DEFAULT_POLICY;
  const issues: { path: string; message: string; value?: unknown }[] = [];

  const dimensions = (u.dimensions ?? d.dimensions).map((dim, i) => {
    const known = KNOWN_DIMENSIONS[dim.name];
    const load = dim.load ?? known?.load;
    const capacity = dim.capacity ?? known?.capacity;
    if (load === undefined)
      issues.push({ path: `dimensions[${i}].load`, message: `required for dimension "${dim.name}"` });
    if (capacity === undefined)
      issues.push({ path: `dimensions[${i}].capacity`, message: `required for dimension "${dim.name}"` });
    return {
      name: dim.name,
      weight: dim.weight,
      load: load ?? '',
      capacity: capacity ?? '',
      missingServerLoad: dim.missingServerLoad ?? known?.missingServerLoad ?? 'zero',
    };
  });
  const names = new Set<string>();
  dimensions.forEach((dim, i) => {
    if (names.has(dim.name))
      issues.push({ path: `dimensions[${i}].name`, message: 'duplicate dimension', value: dim.name });
    names.add(dim.name);
  });
  if (dimensions.reduce((s, dim) => s + dim.weight, 0) <= 0) {
    issues.push({ path: 'dimensions', message: 'the weights must not all be zero' });
  }
  const forecast = {
    horizonHours: u.forecast?.horizonHours ?? d.forecast.horizonHours,
    peakSlots: u.forecast?.peakSlots ?? d.forecast.peakSlots,
    maxError: u.forecast?.maxError ?? d.forecast.maxError,
  };
  if (forecast.peakSlots > forecast.horizonHours) {
    issues.push({
      path: 'forecast.peakSlots',
      message: `expected at most forecast.horizonHours (${forecast.horizonHours})`,
      value: forecast.peakSlots,
    });
  }
  if (issues.length > 0) throw new InputError(issues.map((i) => ({ file, ...i })));

  return {
    mode: u.mode ?? d.mode,
    dimensions,
    aggregates: u.aggregates ?? d.aggregates,
    budget: { maxMoves: u.budget?.maxMoves ?? d.budget.maxMoves },
    concurrency: {
      perHostOutgoing: u.concurrency?.perHostOutgoing ?? d.concurrency.perHostOutgoing,
      global: u.concurrency?.global ?? d.concurrency.global,
    },
    spread: { targetImbalance: u.spread?.targetImbalance ?? d.spread.targetImbalance },
    pack: {
      spareHosts: u.pack?.spareHosts ?? d.pack.spareHosts,
      maxFill: u.pack?.maxFill ?? d.pack.maxFill,
      partialDrainMaxPinned: u.pack?.partialDrainMaxPinned ?? d.pack.partialDrainMaxPinned,
    },
    minGain: u.minGain ?? d.minGain,
    migrationCostPerSecond: u.migrationCostPerSecond ?? d.migrationCostPerSecond,
    threshold:
      u.threshold === undefined
        ? d.threshold
        : typeof u.threshold === 'number'
          ? thresholdOfLevel(u.threshold as ThresholdLevel)
          : { level: null, mandatoryOnly: false, ...u.threshold },
    load: u.load ?? d.load,
    forecast,
    hotThreshold: u.hotThreshold ?? d.hotThreshold,
    softGroupPenalty: u.softGroupPenalty ?? d.softGroupPenalty,
    planner: { timeLimitMs: u.planner?.timeLimitMs ?? d.planner.timeLimitMs },
    costModel: { ...d.costModel, ...u.costModel },
  };
}

/**
 * A compiled policy written back as a policy document, which compilePolicy takes again: the
 * threshold as its level, or its figures when it has none.
 */
export function policyDocument(p: Policy): Record<string, unknown> {
  const { threshold, ...rest } = p;
  const doc = JSON.parse(JSON.stringify(rest)) as Record<string, unknown>;
  doc.threshold =
    threshold.level !== null
      ? threshold.level
      : { perMove: threshold.perMove, perMinute: threshold.perMinute, perGiB: threshold.perGiB };
  return doc;
}

export async function loadPolicyFile(path: string): Promise<Policy> {
  const text = await readTextFile(path);
  // Loaded here, not at start-up: the YAML parser is a fifth of a plan's start-up time.
  const { parse: parseYaml } = await import('yaml');
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (err) {
    throw new InputError([
      { file: path, path: '', message: `not valid YAML (${(err as Error).message.split('\n')[0]})` },
    ]);
  }
  return compilePolicy(doc, path);
}
