import { performance } from 'node:perf_hooks';
import type { Command } from 'commander';
import { InputError } from '../../errors.js';
import { checkOutputPath } from '../../formats/output-path.js';
import { writePlan } from '../../formats/plan-file.js';
import { readSnapshot } from '../../formats/snapshot-file.js';
import { planSnapshot } from '../../planner/index.js';
import { aggregateScope } from '../../policy/aggregate-scope.js';
import { DEFAULT_POLICY } from '../../policy/defaults.js';
import { loadPolicyFile } from '../../policy/load.js';
import { POLICY_MODES, type PolicyMode } from '../../policy/types.js';
import { describeCommand } from '../command-list.js';
import { formatPlan } from '../format-plan.js';
import { parseIntegerOption } from '../numbers.js';

export function register(program: Command): void {
  program
    .command('plan')
    .description(describeCommand('plan'))
    .requiredOption('--snapshot <file>', 'snapshot (aicerine-snapshot/1, .json or .json.gz)')
    .option('--mode <mode>', 'spread | pack | repair-only (overrides the policy)')
    .option('--max-moves <n>', 'move budget for the whole plan (overrides the policy)')
    .option('--policy <file>', 'policy file (YAML); see docs/policy.md')
    .option('--json', 'print the plan JSON (aicerine-plan/1) instead of the table')
    .option('-o, --output <file>', 'also write the plan JSON to this file')
    .action(
      async (opts: {
        snapshot: string;
        mode?: string;
        maxMoves?: string;
        policy?: string;
        json?: boolean;
        output?: string;
      }) => {
        if (opts.output) await checkOutputPath(opts.output);
        const policy = opts.policy ? await loadPolicyFile(opts.policy) : structuredClone(DEFAULT_POLICY);
        if (opts.mode !== undefined) policy.mode = parseMode(opts.mode);
        if (opts.maxMoves !== undefined)
          policy.budget.maxMoves = parseIntegerOption('--max-moves', opts.maxMoves, { min: 0 });
        const snapshot = await readSnapshot(opts.snapshot);
        // Said before planning, naming the policy file: an unknown aggregate or two sharing a host.
        const scope = aggregateScope(snapshot, policy, opts.policy ?? '--policy (default)');
        if (scope.issues.length > 0) throw new InputError([...scope.issues]);
        const plan = planSnapshot(snapshot, policy, { now: () => performance.now() });
        if (opts.output) await writePlan(opts.output, plan);
        process.stdout.write(opts.json ? `${JSON.stringify(plan, null, 2)}\n` : formatPlan(plan));
      },
    );
}

export function parseMode(value: string): PolicyMode {
  if ((POLICY_MODES as readonly string[]).includes(value)) return value as PolicyMode;
  throw new InputError([{ path: '--mode', message: `expected one of ${POLICY_MODES.join(', ')}`, value }]);
}
