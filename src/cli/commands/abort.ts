// `aicerine abort ID`: the same as `aicerine executions abort ID` (through the service API).
import type { Command } from 'commander';
import { describeCommand } from '../command-list.js';
import { abortCommand } from './executions.js';

export function register(program: Command): void {
  abortCommand(program.command('abort')).description(describeCommand('abort'));
}
