import type { Command } from 'commander';
import { type CheckOptions, checkPlan, formatCheckResult } from '../../checker/index.js';
import { InputError } from '../../errors.js';
import { readPlan } from '../../formats/plan-file.js';
import { readSnapshot } from '../../formats/snapshot-file.js';
import { loadPolicyFile } from '../../policy/load.js';
import { describeCommand } from '../command-list.js';
import { parseIntegerOption, parseNumberOption } from '../numbers.js';

interface CheckPlanFlags {
  snapshot: string;
  plan: string;
  policy?: string;
  maxMoves?: string;
  perHostOutgoing?: string;
  globalConcurrent?: string;
  tolerance?: string;
  json?: boolean;
  allowOtherSnapshot?: boolean;
}

/** Limits from the policy file, then flags on top; whatever neither gives comes from the plan's own limits. */
async function optionsFrom(flags: CheckPlanFlags): Promise<CheckOptions> {
  const options: CheckOptions = {};
  if (flags.policy) {
    const policy = await loadPolicyFile(flags.policy);
    options.dimensions = policy.dimensions;
    options.maxMoves = policy.budget.maxMoves;
    options.perHostOutgoing = policy.concurrency.perHostOutgoing;
    options.globalConcurrent = policy.concurrency.global;
  }
  // The same ranges as the policy's keys: a limit of 0 migrations would allow no plan at all.
  if (flags.maxMoves !== undefined)
    options.maxMoves = parseIntegerOption('--max-moves', flags.maxMoves, { min: 0 });
  if (flags.perHostOutgoing !== undefined) {
    options.perHostOutgoing = parseIntegerOption('--per-host-outgoing', flags.perHostOutgoing, { min: 1 });
  }
  if (flags.globalConcurrent !== undefined) {
    options.globalConcurrent = parseIntegerOption('--global-concurrent', flags.globalConcurrent, { min: 1 });
  }
  if (flags.tolerance !== undefined)
    options.tolerance = parseNumberOption('--tolerance', flags.tolerance, { min: 0 });
  return options;
}

export function register(program: Command): void {
  program
    .command('check-plan')
    .description(describeCommand('check-plan'))
    .requiredOption(
      '--snapshot <file>',
      'snapshot the plan was made from (aicerine-snapshot/1, .json or .json.gz)',
    )
    .requiredOption('--plan <file>', 'plan to check (aicerine-plan/1, .json or .json.gz)')
    .option('--policy <file>', 'policy file (YAML): its dimensions and limits replace those the plan records')
    .option('--max-moves <n>', 'move budget for the whole plan')
    .option('--per-host-outgoing <n>', 'outgoing migrations per source host per wave')
    .option('--global-concurrent <n>', 'migrations in flight per aggregate per wave')
    .option('--tolerance <x>', 'allowed relative difference in reported before/after numbers', '1e-6')
    .option('--json', 'print {"ok", "violations"} as JSON')
    .option(
      '--allow-other-snapshot',
      "check against a snapshot other than the plan's own (snapshotTakenAt differs)",
    )
    .action(async (flags: CheckPlanFlags) => {
      const options = await optionsFrom(flags);
      const [snapshot, plan] = await Promise.all([readSnapshot(flags.snapshot), readPlan(flags.plan)]);
      if (plan.snapshotTakenAt !== snapshot.takenAt && !flags.allowOtherSnapshot) {
        throw new InputError([
          {
            file: flags.plan,
            path: 'snapshotTakenAt',
            message: `the plan was made from a snapshot taken at ${plan.snapshotTakenAt}, but ${flags.snapshot} was taken at ${snapshot.takenAt}; check it against its own snapshot, or pass --allow-other-snapshot`,
          },
        ]);
      }
      const result = checkPlan(snapshot, plan, options);
      process.stdout.write(
        flags.json ? `${JSON.stringify(result, null, 2)}\n` : formatCheckResult(result, plan, flags.plan),
      );
      if (!result.ok) process.exitCode = 1;
    });
}
