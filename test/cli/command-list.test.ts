import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { COMMANDS, commandOf } from '../../src/cli/command-list.js';

describe('the command list main.ts loads from', () => {
  it.each(COMMANDS.map((c) => [c.name, c] as const))(
    '%s: its module registers that command, described the same',
    async (name, entry) => {
      const program = new Command();
      (await entry.load()).register(program);
      expect(program.commands.map((c) => c.name())).toEqual([name]);
      expect(program.commands[0]!.description()).toBe(entry.description);
    },
  );

  it('finds the command an argument list runs, and none for help or a typo', () => {
    expect(commandOf(['plan', '--snapshot', 'x.json'])?.name).toBe('plan');
    expect(commandOf(['help', 'check-plan'])?.name).toBe('check-plan');
    expect(commandOf(['--help'])).toBeUndefined();
    expect(commandOf(['plann'])).toBeUndefined();
    expect(commandOf([])).toBeUndefined();
  });
});
