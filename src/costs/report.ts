// The `aicerine costs` report document: per aggregate, what was fitted, how well, and which
// model the planner and the executor will use.

import type { CostModelPolicy } from '../policy/types.js';
import { AggregateCostEstimator, type TimeoutSettings } from './estimator.js';
import type { AggregateCostFit } from './fit.js';
import type { HistorySamples } from './history.js';

export const COSTS_REPORT_FORMAT = 'aicerine-costs/1' as const;

export interface CostsReport {
  format: typeof COSTS_REPORT_FORMAT;
  since: string;
  /** Live-migration records read from os-migrations. */
  records: number;
  samples: number;
  skipped: HistorySamples['skipped'];
  queueCorrected: number;
  aggregates: (AggregateCostFit & {
    uses: 'learned' | 'pre-copy';
    /** What the model in use predicts, and the executor's timeout, for a few RAM sizes. */
    examples: { ramMB: number; estimatedSeconds: number; timeoutSeconds: number }[];
  })[];
}

const EXAMPLE_RAM_MB = [2048, 8192, 32768];

export function buildCostsReport(
  history: HistorySamples & { records: number; since: string },
  fits: readonly AggregateCostFit[],
  policyModel: CostModelPolicy,
  timeouts: TimeoutSettings,
): CostsReport {
  return {
    format: COSTS_REPORT_FORMAT,
    since: history.since,
    records: history.records,
    samples: history.samples.length,
    skipped: history.skipped,
    queueCorrected: history.queueCorrected,
    aggregates: fits.map((fit) => {
      const est = new AggregateCostEstimator(fit.aggregate, policyModel, fit, timeouts);
      return {
        ...fit,
        uses: est.source,
        examples: EXAMPLE_RAM_MB.map((ramMB) => ({
          ramMB,
          estimatedSeconds: est.estimateSeconds({ ramMB }),
          timeoutSeconds: est.timeoutFor(ramMB),
        })),
      };
    }),
  };
}
