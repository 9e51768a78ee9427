// `aicerine config check FILE` and `aicerine config example`: validate the service
// configuration without starting anything, and print a commented example to start from.
import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { loadServiceConfig, secretFileProblems } from '../../config/load.js';
import { formatConfigSummary } from '../../config/summary.js';
import { InputError } from '../../errors.js';
import { describeCommand } from '../command-list.js';

const EXAMPLE = new URL('../../../examples/aicerine.yaml', import.meta.url);

export function register(program: Command): void {
  const config = program.command('config').description(describeCommand('config'));
  config
    .command('check')
    .description('validate a configuration file and summarise it per aggregate (exit status 1 when invalid)')
    .argument('<file>', 'the configuration file (YAML or JSON)')
    .option('--now <time>', 'evaluate the maintenance windows at this ISO 8601 time instead of now')
    .action(async (file: string, flags: { now?: string }) => {
      const now = flags.now === undefined ? new Date() : new Date(flags.now);
      if (Number.isNaN(now.getTime())) {
        throw new Error(`--now: expected an ISO 8601 time, got ${JSON.stringify(flags.now)}`);
      }
      try {
        const { config: c, warnings } = await loadServiceConfig(file);
        // serve reads the secret files before its first cycle: a missing one fails here too.
        const missing = await secretFileProblems(c);
        if (missing.length > 0) throw new InputError(missing);
        for (const w of warnings) process.stderr.write(`warning: ${w}\n`);
        process.stdout.write(formatConfigSummary(c, now));
      } catch (e) {
        if (!(e instanceof InputError)) throw e;
        const n = e.issues.length;
        process.stdout.write(`INVALID ${file}: ${n} problem${n === 1 ? '' : 's'}\n${e.message}\n`);
        process.exitCode = 1;
      }
    });
  config
    .command('example')
    .description('print a commented example configuration (examples/aicerine.yaml)')
    .action(async () => {
      process.stdout.write(await readFile(EXAMPLE, 'utf8'));
    });
}
