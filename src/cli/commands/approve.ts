// `aicerine approve ID`: the same as `aicerine plans approve ID` (through the service API).
import type { Command } from 'commander';
import { describeCommand } from '../command-list.js';
import { decideCommand } from './plans.js';

export function register(program: Command): void {
  decideCommand(program.command('approve'), 'approve').description(describeCommand('approve'));
}
