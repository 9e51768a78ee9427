// `aicerine show-plan ID`: the same as `aicerine plans show ID` (through the service API).
import type { Command } from 'commander';
import { describeCommand } from '../command-list.js';
import { showPlanCommand } from './plans.js';

export function register(program: Command): void {
  showPlanCommand(program.command('show-plan')).description(describeCommand('show-plan'));
}
