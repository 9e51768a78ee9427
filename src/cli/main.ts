import { Command } from 'commander';
import { register as registerAggregates } from './commands/aggregates.js';
import { register as registerAudit } from './commands/audit.js';
import { register as registerCheck } from './commands/check.js';
import { register as registerCheckPlan } from './commands/check-plan.js';
import { register as registerConfig } from './commands/config.js';
import { register as registerCosts } from './commands/costs.js';
import { register as registerCredentials } from './commands/credentials.js';
import { register as registerDemo } from './commands/demo.js';
import { register as registerExecutions } from './commands/executions.js';
import { register as registerPause } from './commands/pause.js';
import { register as registerPlan } from './commands/plan.js';
import { register as registerPlans } from './commands/plans.js';
import { register as registerQuarantine } from './commands/quarantine.js';
import { register as registerRecord } from './commands/record.js';
import { register as registerResume } from './commands/resume.js';
import { register as registerSim } from './commands/sim.js';
import { register as registerSnapshot } from './commands/snapshot.js';
import { register as registerStatus } from './commands/status.js';

const program = new Command();
program
  .name('aicerine')
  .description('VM placement optimizer and live-migration scheduler for OpenStack')
  .version('0.1.0')
  .showHelpAfterError();

registerPlan(program);
registerCheckPlan(program);
registerSnapshot(program);
registerSim(program);
registerDemo(program);
registerRecord(program);
registerCheck(program);
registerCredentials(program);
registerConfig(program);
registerCosts(program);
registerPlans(program);
registerExecutions(program);
registerQuarantine(program);
registerPause(program);
registerResume(program);
registerAggregates(program);
registerAudit(program);
registerStatus(program);

program.parseAsync(process.argv).catch((err: unknown) => {
  process.stderr.write(`aicerine: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
