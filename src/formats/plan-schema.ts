import { z } from 'zod';
import { MOVE_PHASES, PLAN_FORMAT, PLAN_MODES } from '../model/plan.js';
import { isoTime, nonEmpty, nonNeg, nonNegInt, posInt, text } from './schema-helpers.js';

const dimension = z.looseObject({ stddev: nonNeg(), max: nonNeg() });
const balance = z.looseObject({ imbalance: nonNeg(), dimensions: z.record(z.string(), dimension) });

const move = z.looseObject({
  step: posInt(),
  wave: posInt(),
  server: nonEmpty(),
  from: nonEmpty(),
  to: nonEmpty(),
  phase: z.enum(MOVE_PHASES),
  reason: text(),
  estimatedSeconds: nonNeg(),
  gain: z.number({ error: 'expected a number' }).optional(),
  after: z.array(posInt(), { error: 'expected a list of step numbers' }).optional(),
});

export const planSchema = z.looseObject({
  format: z.literal(PLAN_FORMAT, { error: `expected "${PLAN_FORMAT}"` }),
  snapshotTakenAt: isoTime(),
  mode: z.enum(PLAN_MODES),
  aggregates: z.array(
    z.looseObject({
      name: nonEmpty(),
      moves: z.array(move),
      before: balance,
      after: balance,
      hostsFreed: z.array(nonEmpty()),
      unresolved: z.array(text()),
    }),
  ),
  stats: z.looseObject({ planningMs: nonNeg() }),
  limits: z
    .looseObject({ maxMoves: nonNegInt(), perHostOutgoing: posInt(), globalConcurrent: posInt() })
    .optional(),
});
