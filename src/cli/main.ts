import { Command } from 'commander';
import { COMMANDS, commandOf } from './command-list.js';

const program = new Command();
program
  .name('aicerine')
  .description('VM placement optimizer and live-migration scheduler for OpenStack')
  .version('0.1.0')
  .showHelpAfterError();

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const wanted = commandOf(args);
  if (wanted !== undefined) {
    (await wanted.load()).register(program);
  } else {
    // Help, a typo or nothing: list the commands without loading any of them.
    for (const c of COMMANDS) program.command(c.name).description(c.description);
  }
  await program.parseAsync(process.argv);
}

main().catch((err: unknown) => {
  process.stderr.write(`aicerine: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
