import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { register } from '../../../src/cli/commands/costs.js';

describe('aicerine costs', () => {
  it('refuses bad options before reading anything, naming the option and the value', async () => {
    const run = (args: string[]) => {
      const program = new Command().exitOverride();
      register(program);
      return program.parseAsync(['costs', ...args], { from: 'user' });
    };
    await expect(run(['--days', 'x'])).rejects.toThrow('--days: expected a number of days > 0, got "x"');
    await expect(run(['--days', '0'])).rejects.toThrow('--days: expected a number of days > 0, got "0"');
    await expect(run(['--min-samples', '2.5'])).rejects.toThrow(
      '--min-samples: expected a positive integer, got "2.5"',
    );
    await expect(run(['--concurrency', '0'])).rejects.toThrow(
      '--concurrency: expected a positive integer, got "0"',
    );
  });
});
