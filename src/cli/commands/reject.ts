// `aicerine reject ID`: the same as `aicerine plans reject ID` (through the service API).
import type { Command } from 'commander';
import { describeCommand } from '../command-list.js';
import { decideCommand } from './plans.js';

export function register(program: Command): void {
  decideCommand(program.command('reject'), 'reject').description(describeCommand('reject'));
}
