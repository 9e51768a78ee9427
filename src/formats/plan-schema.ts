import { z } from 'zod';
import type { InputIssue } from '../errors.js';
import { MANDATORY_KINDS, MOVE_PHASES, PLAN_FORMAT, PLAN_MODES } from '../model/plan.js';
import { isoTime, nonEmpty, nonNeg, nonNegInt, posInt, text } from './schema-helpers.js';

const dimension = z.looseObject({ stddev: nonNeg(), max: nonNeg() });
const balance = z.looseObject({ imbalance: nonNeg(), dimensions: z.record(z.string(), dimension) });

const flag = () => z.boolean({ error: 'expected true or false' }).optional();

const move = z
  .looseObject({
    step: posInt(),
    wave: posInt(),
    server: nonEmpty(),
    from: nonEmpty(),
    to: nonEmpty(),
    phase: z.enum(MOVE_PHASES),
    softGroup: flag(),
    reason: text(),
    estimatedSeconds: nonNeg(),
    gain: z.number({ error: 'expected a number' }).optional(),
    after: z.array(posInt(), { error: 'expected a list of step numbers' }).optional(),
    mandatory: z.enum(MANDATORY_KINDS).optional(),
    threshold: z
      .looseObject({
        worth: z.number({ error: 'expected a number' }),
        bar: z.number({ error: 'expected a number' }),
      })
      .optional(),
    exchangeWith: posInt().optional(),
    makesRoomFor: posInt().optional(),
  })
  .superRefine((m, ctx) => {
    if (m.softGroup === true && m.phase !== 'affinity')
      ctx.addIssue({
        code: 'custom',
        path: ['softGroup'],
        message: `true only on a move of phase "affinity" (a server-group move), this one is "${m.phase}"`,
      });
  });

const forecast = z.looseObject({
  load: z.enum(['forecast', 'current']),
  fallback: text().optional(),
  horizonHours: posInt(),
  peakSlots: posInt(),
  peaks: z.array(z.looseObject({ slot: nonNegInt(), label: nonEmpty(), at: isoTime(), pressure: nonNeg() })),
  serversOnCurrentLoad: nonNegInt(),
  error: nonNeg().optional(),
  maxError: nonNeg(),
  imbalanceBefore: nonNeg(),
  imbalanceAfter: nonNeg(),
});

export const planSchema = z
  .looseObject({
    format: z.literal(PLAN_FORMAT, { error: `expected "${PLAN_FORMAT}"` }),
    snapshotTakenAt: isoTime(),
    mode: z.enum(PLAN_MODES),
    repairOnly: flag(),
    aggregates: z.array(
      z.looseObject({
        name: nonEmpty(),
        moves: z.array(move),
        before: balance,
        after: balance,
        hostsFreed: z.array(nonEmpty()),
        unresolved: z.array(text()),
        forecast: forecast.optional(),
      }),
    ),
    stats: z.looseObject({ planningMs: nonNeg() }),
    limits: z
      .looseObject({
        maxMoves: nonNegInt(),
        perHostOutgoing: posInt(),
        globalConcurrent: posInt(),
        threshold: z
          .looseObject({
            level: posInt().nullable(),
            mandatoryOnly: z.boolean({ error: 'expected true or false' }),
            perMove: nonNeg(),
            perMinute: nonNeg(),
            perGiB: nonNeg(),
            minGain: nonNeg(),
            migrationCostPerSecond: nonNeg(),
            softGroupPenalty: nonNeg(),
          })
          .optional(),
        hotThreshold: nonNeg().optional(),
      })
      .optional(),
  })
  .superRefine((p, ctx) => {
    if (p.repairOnly === true && p.mode !== 'spread')
      ctx.addIssue({
        code: 'custom',
        path: ['repairOnly'],
        message: `true only with mode "spread" (how a repair-only plan is written), this plan's mode is "${p.mode}"`,
      });
  });

// Values an unreleased build wrote before plans kept to the spec's enumerations. They are refused
// like any other value outside it, with the way aicerine-plan/1 says the same thing.
const SPEC_WAY: Array<{ field: RegExp; value: string; way: string }> = [
  {
    field: /(^|\.)phase$/,
    value: 'soft-group',
    way: 'a soft server-group move is phase "affinity" with "softGroup": true',
  },
  {
    field: /^mode$/,
    value: 'repair-only',
    way: 'a repair-only plan is mode "spread" with "repairOnly": true',
  },
];

/** Adds to an issue about a value the spec lacks how the spec says it instead. */
export function withSpecWay(issue: InputIssue): InputIssue {
  const hint = SPEC_WAY.find((h) => h.value === issue.value && h.field.test(issue.path));
  if (!hint) return issue;
  return {
    ...issue,
    message: `${issue.message} (aicerine-plan/1 has no ${JSON.stringify(hint.value)}: ${hint.way})`,
  };
}
